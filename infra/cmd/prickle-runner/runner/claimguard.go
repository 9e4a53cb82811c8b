package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/useprickle/prickle/shared/domain/pulse"
)

// holding is a teammate's live claim of a file: which agent, for which
// task, by which entry of its pulse, and the pulse's last report (the
// claim is live until that report goes stale, unless renewed).
type holding struct {
	Agent, TaskID, Claim string
	Since, Until         time.Time
}

// holderOf finds the teammate (any agent but me) whose live Team Pulse
// entry (reported within window before now) claims the file rel of the
// work tree at root; the newest report wins. Nil when nobody holds it.
// Files are compared, not only paths: a claim of src/a.ts holds hard.ts
// when both name one file there (a hard link). Root "" compares paths only.
func holderOf(entries []pulse.Entry, me, root, rel string, now time.Time, window time.Duration) *holding {
	same := sameFileAs(root, rel)
	var h *holding
	for _, e := range entries {
		if e.AgentID == me || now.Sub(e.UpdatedAt) > window || (h != nil && !e.UpdatedAt.After(h.Since)) {
			continue
		}
		for _, c := range e.Files {
			if covers(c, rel) || same(c) {
				h = &holding{Agent: e.AgentID, Claim: c, Since: e.UpdatedAt, Until: e.UpdatedAt.Add(window)}
				if e.TaskID != nil {
					h.TaskID = *e.TaskID
				}
				break
			}
		}
	}
	return h
}

// sameFileAs says of a claim whether it names, in the work tree at root,
// the very file rel is (os.SameFile: one device and inode, so a hard link
// to a held file is held). Nothing is the same when rel does not exist yet
// (a new file has no other name) or root is "".
func sameFileAs(root, rel string) func(claim string) bool {
	none := func(string) bool { return false }
	if root == "" {
		return none
	}
	target, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil || !target.Mode().IsRegular() {
		return none
	}
	return func(claim string) bool {
		c := cleanClaim(claim)
		if c == "" || c == rel {
			return false
		}
		info, err := os.Stat(filepath.Join(root, filepath.FromSlash(c)))
		return err == nil && os.SameFile(target, info)
	}
}

// ownEntry is my live Team Pulse entry, or nil.
func ownEntry(entries []pulse.Entry, me string, now time.Time, window time.Duration) *pulse.Entry {
	for i, e := range entries {
		if e.AgentID == me && now.Sub(e.UpdatedAt) <= window {
			return &entries[i]
		}
	}
	return nil
}

// says is what the holding tells a teammate about the file rel: who holds
// it, for which task, since when, and until when it stays held.
func (h holding) says(rel string, now time.Time) string {
	what := rel
	if cleanClaim(h.Claim) != rel {
		what = fmt.Sprintf("%s (the same file as its claim %s)", rel, h.Claim)
	}
	task := "no task"
	if h.TaskID != "" {
		task = "task " + h.TaskID
	}
	return fmt.Sprintf("%s holds %s for %s since %s; it is released when %s's Team Pulse lets it go, or at %s if not renewed",
		h.Agent, what, task, clock(h.Since, now), h.Agent, clock(h.Until, now))
}

// clock is t as a person reads it beside now: "14:02 UTC", with the date
// when it is another day.
func clock(t, now time.Time) string {
	t, now = t.UTC(), now.UTC()
	if t.YearDay() == now.YearDay() && t.Year() == now.Year() {
		return t.Format("15:04 UTC")
	}
	return t.Format("Jan 2 15:04 UTC")
}

// denied is the reason a guarded edit is stopped with (file guard deny).
func (h holding) denied(rel string, now time.Time) string {
	return "prickle-runner stopped this edit before it happened: " + h.says(rel, now) +
		". Hand off, wait, or pick other work: read_room shows when the file is free; then make the edit again."
}

// warned is what the agent is told when its edit of a held file goes
// ahead (file guard warn).
func (h holding) warned(rel string, now time.Time) string {
	return "prickle-runner: " + h.says(rel, now) + ". This project lets the edit go ahead (file guard warn): coordinate with " +
		h.Agent + " before you change it further."
}

// asked is the reason the owner reads when a guarded edit is asked of them
// (file guard ask): request_step's reason is at most 500 characters.
func (h holding) asked(rel string, now time.Time) string {
	return clip(h.says(rel, now)+". Approve to let this edit go ahead once anyway.", 500)
}
