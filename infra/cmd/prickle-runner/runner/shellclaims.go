package runner

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/useprickle/prickle/shared/domain/wakeup"
)

// File claims of edits made through a shell (or any tool that names no
// file): the runner keeps a picture of the run's work tree (worktree.json
// in the task's session dir): `git status --porcelain -z` with every
// untracked file, and for each path listed its size, time and mode. The
// runner takes it as a run starts; after each shell call (a post-tool hook)
// the picture is taken again, and every path whose entry appeared, went or
// changed since is claimed as an edit is, unless a teammate holds it: then
// the run is told, and the holder keeps it (an edit of it through an edit
// tool is still stopped). At most maxShellClaims paths a call are claimed,
// the .git directory is never looked at, and a work dir that is no git
// checkout claims nothing from the shell. Where a CLI has no post-tool
// hook, the comparison at the run's end claims what its shell changed.

// treeFile is the picture of the work tree, in the task's session dir.
const treeFile = "worktree.json"

// maxShellClaims bounds the paths one comparison claims; maxTreeEntries the
// entries of `git status` read; maxStatusBytes its output.
const (
	maxShellClaims = 20
	maxTreeEntries = 20000
	maxStatusBytes = 8 << 20
)

// treeState is a picture of a work tree: each path `git status` lists
// (relative to the root, slash-separated) with its fingerprint.
type treeState struct {
	Root  string            `json:"root"`
	Files map[string]string `json:"files"`
	// Partial: git listed more than maxTreeEntries paths; only those were kept.
	Partial bool      `json:"partial,omitempty"`
	At      time.Time `json:"at"`
}

// snapshotTree pictures the work tree at root; ok is false when root is no
// git checkout (or git fails).
func snapshotTree(ctx context.Context, root string) (treeState, bool) {
	ctx, cancel := context.WithTimeout(ctx, 4*gitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "-C", root, "status", "--porcelain", "-z", "--untracked-files=all", "--no-renames", "--ignore-submodules=all")
	cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0")
	out, err := cmd.Output()
	if err != nil || len(out) > maxStatusBytes {
		return treeState{}, false
	}
	return treeFromStatus(root, out), true
}

// treeFromStatus reads `git status --porcelain -z --no-renames` output.
func treeFromStatus(root string, out []byte) treeState {
	t := treeState{Root: root, Files: map[string]string{}, At: time.Now().UTC()}
	for entry := range bytes.SplitSeq(out, []byte{0}) {
		if len(entry) < 4 || entry[2] != ' ' {
			continue
		}
		rel := string(entry[3:])
		if rel == ".git" || strings.HasPrefix(rel, ".git/") {
			continue
		}
		if len(t.Files) == maxTreeEntries {
			t.Partial = true
			break
		}
		t.Files[rel] = string(entry[:2]) + " " + fingerprint(filepath.Join(root, filepath.FromSlash(rel)))
	}
	return t
}

// fingerprint is what says a file changed: its size, modification time and
// mode ("gone" when it is not there).
func fingerprint(path string) string {
	fi, err := os.Lstat(path)
	if err != nil {
		return "gone"
	}
	return fmt.Sprintf("%d %d %o", fi.Size(), fi.ModTime().UnixNano(), fi.Mode())
}

// changedSince is the paths whose entry appeared, went or changed from
// before to t, sorted.
func (t treeState) changedSince(before treeState) []string {
	var out []string
	for p, f := range t.Files {
		if before.Files[p] != f {
			out = append(out, p)
		}
	}
	for p := range before.Files {
		if _, ok := t.Files[p]; !ok {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// loadTree reads the session's picture; ok is false when there is none.
func loadTree(sessionDir string) (treeState, bool) {
	var t treeState
	found, err := readJSON(filepath.Join(sessionDir, treeFile), &t)
	return t, found && err == nil && t.Files != nil
}

func saveTree(sessionDir string, t treeState) error {
	return writeJSON(sessionDir, treeFile, t)
}

// markTree pictures the work tree of the run's directory dir as the run
// starts (the claims lock held), so that only what the run changes is
// claimed. A dir that is no git checkout has no picture.
func markTree(ctx context.Context, sessionDir, dir string) {
	if sessionDir == "" || dir == "" {
		return
	}
	root := gitRoot(ctx, dir)
	if root == "" {
		_ = os.Remove(filepath.Join(sessionDir, treeFile))
		return
	}
	unlock, err := lockClaims(filepath.Dir(sessionDir))
	if err != nil {
		return
	}
	defer unlock()
	if t, ok := snapshotTree(ctx, root); ok {
		_ = saveTree(sessionDir, t)
	}
}

// gitRoot is dir's git top-level (symbolic links resolved), "" when dir is
// no git checkout.
func gitRoot(ctx context.Context, dir string) string {
	out, err := git(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil || out == "" {
		return ""
	}
	return realPath(out)
}

// treeChanges takes the picture again and returns what changed since the
// session's last one, which it replaces; the claims lock is held. Nothing
// changed when there was no picture yet (this one is the first).
func treeChanges(ctx context.Context, sessionDir, root string) (changed []string, partial bool) {
	now, ok := snapshotTree(ctx, root)
	if !ok {
		return nil, false
	}
	before, had := loadTree(sessionDir)
	_ = saveTree(sessionDir, now)
	if !had || before.Root != root {
		return nil, now.Partial
	}
	return now.changedSince(before), now.Partial || before.Partial
}

// claimShellChanges claims the changed paths (the claims lock held): each no teammate holds (at most maxShellClaims);
// a note for the model names the held ones and what was left unclaimed
// ("" when there is nothing to say).
func (c *claimer) claimShellChanges(ctx context.Context, changed []string, partial bool) string {
	entries, err := c.room.Pulse(ctx, c.env.RunToken, c.ce.Project)
	if err != nil {
		return clip(fmt.Sprintf("prickle-runner could not claim the %d files your command changed (%s) on Team Pulse (%s): teammates are not warned off them.",
			len(changed), strings.Join(changed[:min(len(changed), 5)], ", "), err.Error()), 1000)
	}
	now := c.now()
	var free, held, long []string
	var said []string
	for _, rel := range changed {
		if h := holderOf(entries, c.settings.Agent, c.root, rel, now, window(c.settings)); h != nil {
			held = append(held, rel)
			if len(said) < 3 {
				said = append(said, h.says(rel, now))
			}
			continue
		}
		if len(rel) > MaxPulseFile {
			long = append(long, rel)
			continue
		}
		free = append(free, rel)
	}
	var notes []string
	if len(held) > 0 {
		notes = append(notes, fmt.Sprintf("prickle-runner: the work tree shows %s changed by this run (seen after your command), held by a teammate: %s. The holder keeps it: your next edit of it is stopped while it is held (file guard %s). Hand off, undo your change, or coordinate.",
			strings.Join(held, ", "), strings.Join(said, "; "), c.settings.FileGuard))
	}
	if len(free) > maxShellClaims {
		notes = append(notes, fmt.Sprintf("prickle-runner: your command changed %d files; only %d are claimed (at most %d a call).", len(free), maxShellClaims, maxShellClaims))
		free = free[:maxShellClaims]
	}
	if len(long) > 0 {
		notes = append(notes, fmt.Sprintf("prickle-runner: %d changed paths are over %d characters; Team Pulse cannot list them, so they are not claimed.", len(long), MaxPulseFile))
	}
	if partial {
		notes = append(notes, fmt.Sprintf("prickle-runner: git lists over %d changed files here; only those were compared.", maxTreeEntries))
	}
	if len(free) > 0 {
		if n := c.claim(ctx, entries, free...); n != "" {
			notes = append(notes, n)
		}
	}
	return clip(strings.Join(notes, "\n"), 2000)
}

// claimTreeAtEnd is the comparison at a run's end (with its token, before
// it ends): what the run changed in the work tree that no hook claimed
// after its call (a CLI with no post-tool hook, a command template) is
// claimed now, and logged; a teammate's file among them is logged too.
func (r *Runner) claimTreeAtEnd(w wakeup.Payload, sessionDir, dir, project string) {
	room, ok := r.Tasks.(Room)
	if !ok || dir == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.ctx), r.callTimeout())
	defer cancel()
	note := shellChanged(ctx, HookEnv{RunToken: w.RunToken, SessionDir: sessionDir}, ClaimEnv{Project: project, TaskID: w.TaskID, ProjectDir: dir}, room)
	if note != "" {
		r.Out.Info("work tree compared at the run's end", "task", w.TaskID, "run", w.RunID, "note", note)
	}
}
