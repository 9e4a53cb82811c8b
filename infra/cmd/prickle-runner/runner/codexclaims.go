package runner

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/useprickle/prickle/shared/domain/pulse"
)

// File claims of a Codex run: the same rule as the other templates'. A
// file change (apply_patch) names its files: before the owner is asked,
// each is checked against the teammates' Team Pulse — a file a teammate
// holds declines the change without asking (file guard deny; the model is
// told why in its next turn), or is named in the reason the owner reads
// (ask, warn); once the owner allowed it, its free files are claimed. After
// each command Codex ran, what changed in the work tree is claimed
// (shellclaims.go).

// patchGuard is the claims' word on one file change.
type patchGuard struct {
	c *claimer
	// free are the change's files no teammate holds, to claim once it is allowed.
	free []string
	// deny declines the change; reason tells the owner who holds its files.
	deny, reason string
}

// codexPatchFiles are the files a file change writes: each change's path
// and, for a move, where it goes.
func codexPatchFiles(changes []codexChange) []string {
	var out []string
	for _, c := range changes {
		for _, p := range []string{c.Path, c.Kind.MovePath} {
			if p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// guardPatch checks a file change's files against the teammates' claims.
func (h *codexHost) guardPatch(ctx context.Context, files []string) patchGuard {
	room, ok := h.steps.(Room)
	if !ok || len(files) == 0 {
		return patchGuard{}
	}
	c, err := openClaimer(ctx, HookEnv{RunToken: h.env.RunToken, SessionDir: h.env.SessionDir}, h.claimEnv(), room, h.dir)
	if err != nil {
		return patchGuard{deny: clip("prickle-runner could not read the project's file claims ("+err.Error()+"); the change was not made. Try it again in a moment.", 1000)}
	}
	if c == nil {
		return patchGuard{}
	}
	read, cancel := context.WithTimeout(ctx, roomTimeout)
	defer cancel()
	entries, err := room.Pulse(read, h.env.RunToken, c.ce.Project)
	if err != nil {
		if c.settings.FileGuard == pulse.GuardWarn {
			return patchGuard{reason: "prickle-runner could not read Team Pulse; this change was not checked against the teammates' files."}
		}
		return patchGuard{deny: clip("prickle-runner could not read Team Pulse ("+err.Error()+"); the change was not made. Try it again in a moment.", 1000)}
	}
	g := patchGuard{c: c}
	now := time.Now()
	var said []string
	for _, f := range files {
		rel, ok := claimPath(c.root, c.cwd, f)
		if !ok {
			continue
		}
		hold := holderOf(entries, c.settings.Agent, c.root, rel, now, window(c.settings))
		if hold == nil {
			g.free = append(g.free, rel)
			continue
		}
		if c.settings.FileGuard != pulse.GuardAsk && c.settings.FileGuard != pulse.GuardWarn {
			g.deny = clip(hold.denied(rel, now), 1000)
			return g
		}
		said = append(said, hold.says(rel, now))
	}
	if len(said) > 0 {
		g.reason = clip(strings.Join(said, "; ")+".", maxReason)
	}
	return g
}

// claimPatch claims an allowed change's free files, unless a teammate took one meanwhile.
func (h *codexHost) claimPatch(ctx context.Context, g patchGuard) {
	if g.c == nil || len(g.free) == 0 {
		return
	}
	if note := g.c.claimIfFree(ctx, g.free...); note != "" {
		h.log.Warn("files not claimed", "files", g.free, "note", note)
	}
}

// claimCommandChanges claims what a command Codex ran changed in the work tree.
func (h *codexHost) claimCommandChanges(ctx context.Context) {
	room, ok := h.steps.(Room)
	if !ok {
		return
	}
	if note := shellChanged(ctx, HookEnv{RunToken: h.env.RunToken, SessionDir: h.env.SessionDir}, h.claimEnv(), room); note != "" {
		h.log.Info("what the command changed was compared with Team Pulse", "note", note)
	}
}

func (h *codexHost) claimEnv() ClaimEnv {
	return ClaimEnv{Project: h.env.Project, TaskID: h.env.TaskID, ProjectDir: h.dir}
}

// fileItemID is the item a file change approval is about.
func fileItemID(params []byte) string {
	var p fileApproval
	if json.Unmarshal(params, &p) != nil {
		return ""
	}
	return p.ItemID
}
