package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/useprickle/prickle/shared/domain/pulse"
)

// File claims in the hook: before an edit (EditTools) of a file in the
// project's repository, the hook reads Team Pulse. When a teammate holds the
// file in its live pulse, the project's file guard decides: deny stops the
// edit and says who holds it; ask asks the run's owner (request_step, with
// the holder in the reason), who may allow it once; warn lets it go ahead
// and tells the run who holds it. Otherwise the edit goes the way any call
// goes (the allow-list, or the owner), and once it is let through the hook
// claims the file: the run's agent's pulse lists it, with the task and the
// branch, before the edit happens. An edit of a file a teammate holds is
// never claimed: the holder keeps it.

// EditTools are the Claude Code tools whose calls claim and are guarded.
var EditTools = []string{"Edit", "Write", "MultiEdit", "NotebookEdit"}

// ClaudeShellTool is Claude Code's shell: after each call its PostToolUse
// hook claims what the call changed in the work tree.
const ClaudeShellTool = "Bash"

// roomTimeout bounds the hook's reads and writes of Team Pulse for one call.
const roomTimeout = 30 * time.Second

// ClaimEnv is what the hook reads of the run to claim and guard its edits.
type ClaimEnv struct {
	Project, TaskID string
	// ProjectDir is the run's directory; its git top-level is the root paths are relative to.
	ProjectDir string
}

// ClaimEnvFrom reads the run's PRICKLE_* variables.
func ClaimEnvFrom(getenv func(string) string) ClaimEnv {
	return ClaimEnv{Project: getenv("PRICKLE_PROJECT"), TaskID: getenv("PRICKLE_TASK_ID"), ProjectDir: getenv("PRICKLE_PROJECT_DIR")}
}

// editCall is the part of an edit call's hook input the claims read.
type editCall struct {
	Event     string          `json:"hook_event_name"`
	ToolName  string          `json:"tool_name"`
	ToolInput json.RawMessage `json:"tool_input"`
	Cwd       string          `json:"cwd"`
}

// editedFile is the file an edit tool's input names ("" for none).
func editedFile(input json.RawMessage) string {
	var in struct {
		FilePath     string `json:"file_path"`
		NotebookPath string `json:"notebook_path"`
	}
	if json.Unmarshal(input, &in) != nil {
		return ""
	}
	if in.FilePath != "" {
		return in.FilePath
	}
	return in.NotebookPath
}

// claimer is one edit call's claims: the run, its project's settings and
// the file, relative to the repository root.
type claimer struct {
	env      HookEnv
	ce       ClaimEnv
	room     Room
	settings ClaimSettings
	root     string
	cwd      string
	now      func() time.Time
}

// GuardedHook is the hook with file claims: an edit call of a run that can
// claim (a run token, its project, directory and session dir) is guarded
// and claimed as the comment above says; every other call, and every call
// against a Prickle without file claims, is RunHook's alone.
func GuardedHook(ctx context.Context, in io.Reader, out io.Writer, env HookEnv, ce ClaimEnv, steps Steps, room Room) error {
	b, err := io.ReadAll(io.LimitReader(in, maxHookInput+1))
	if err != nil {
		return fmt.Errorf("hook: read input: %w", err)
	}
	// The claims and the owner's answer share the hook's time: Claude Code gives up on a hook after hookTimeoutSeconds.
	ctx, cancelAll := context.WithTimeout(ctx, (hookTimeoutSeconds-10)*time.Second)
	defer cancelAll()
	plain := func(w io.Writer, e HookEnv, s Steps) error { return RunHook(ctx, bytes.NewReader(b), w, e, s) }
	var call editCall
	if len(b) <= maxHookInput && json.Unmarshal(b, &call) == nil && call.Event == "PostToolUse" {
		// After a shell call: what it changed in the work tree is claimed (shellclaims.go).
		if call.ToolName != ClaudeShellTool {
			return nil
		}
		if note := shellChanged(ctx, env, ce, room); note != "" {
			_, err := out.Write(append(afterContext("PostToolUse", note), '\n'))
			return err
		}
		return nil
	}
	if len(b) > maxHookInput || json.Unmarshal(b, &call) != nil || (call.Event != "" && call.Event != "PreToolUse") ||
		!slices.Contains(EditTools, call.ToolName) || env.RunToken == "" || env.SessionDir == "" || ce.Project == "" || ce.ProjectDir == "" {
		return plain(out, env, steps)
	}
	c := &claimer{env: env, ce: ce, room: room, now: time.Now}
	c.root = repoRoot(ctx, ce.ProjectDir)
	c.cwd = call.Cwd
	if c.cwd == "" {
		c.cwd = ce.ProjectDir
	}
	rel, ok := claimPath(c.root, c.cwd, editedFile(call.ToolInput))
	if !ok {
		return plain(out, env, steps) // outside the repository: never claimed, never guarded
	}
	read, cancel := context.WithTimeout(ctx, roomTimeout)
	defer cancel()
	c.settings, err = room.ClaimSettings(read, env.RunToken, ce.Project)
	if errors.Is(err, ErrNoClaims) {
		return plain(out, env, steps)
	}
	if err != nil {
		return writeHook(out, "deny", clip("prickle-runner could not read the project's file claims ("+err.Error()+
			"); the edit was not made. Try it again in a moment, or checkpoint and end your turn.", 1000), nil)
	}
	unlock, err := lockClaims(filepath.Dir(env.SessionDir))
	if err != nil {
		return writeHook(out, "deny", clip("prickle-runner: "+err.Error()+"; the edit was not made.", 1000), nil)
	}
	entries, err := room.Pulse(read, env.RunToken, ce.Project)
	if err != nil {
		unlock()
		why := "prickle-runner could not read Team Pulse (" + err.Error() + ")"
		if c.settings.FileGuard == pulse.GuardWarn {
			return c.annotated(out, plain, env, steps, clip(why+"; this edit was not checked against your teammates' files.", 1000))
		}
		return writeHook(out, "deny", clip(why+"; the edit was not made. Try it again in a moment, or checkpoint and end your turn.", 1000), nil)
	}
	now := c.now()
	h := holderOf(entries, c.settings.Agent, c.root, rel, now, window(c.settings))
	if h == nil && allowListed(call.ToolName, env.Allowed) {
		note := c.claim(read, entries, rel)
		unlock()
		return c.annotated(out, plain, env, steps, note)
	}
	unlock()
	switch {
	case h == nil:
		return c.askThenClaim(ctx, out, plain, env, steps, rel)
	case c.settings.FileGuard == pulse.GuardWarn:
		// An edit the allow-list does not cover is asked as any call is, the holder named.
		return c.annotated(out, plain, env, reasoned{Steps: steps, reason: h.asked(rel, now)}, h.warned(rel, now))
	case c.settings.FileGuard == pulse.GuardAsk:
		ask := env
		ask.Allowed = slices.DeleteFunc(slices.Clone(env.Allowed), func(a string) bool { return allowListed(call.ToolName, []string{a}) })
		return plain(out, ask, reasoned{Steps: steps, reason: h.asked(rel, now)})
	}
	return writeHook(out, "deny", clip(h.denied(rel, now), 1000), nil)
}

// annotated answers as RunHook does, with note (if any) for the model to read.
func (c *claimer) annotated(out io.Writer, plain func(io.Writer, HookEnv, Steps) error, env HookEnv, steps Steps, note string) error {
	if note == "" {
		return plain(out, env, steps)
	}
	var buf bytes.Buffer
	if err := plain(&buf, env, steps); err != nil {
		return err
	}
	_, err := out.Write(withContext(buf.Bytes(), note))
	return err
}

// askThenClaim lets RunHook decide a call the allow-list does not cover
// (it may wait for the owner, so the claims lock is not held meanwhile);
// when the call goes ahead, the file it edits (as the owner allowed it) is
// claimed unless a teammate took it meanwhile.
func (c *claimer) askThenClaim(ctx context.Context, out io.Writer, plain func(io.Writer, HookEnv, Steps) error, env HookEnv, steps Steps, rel string) error {
	var buf bytes.Buffer
	if err := plain(&buf, env, steps); err != nil {
		return err
	}
	ahead, updated := goesAhead(buf.Bytes())
	if !ahead {
		_, err := out.Write(buf.Bytes())
		return err
	}
	if f := editedFile(updated); f != "" {
		if r, ok := claimPath(c.root, c.cwd, f); ok {
			rel = r
		}
	}
	note := c.claimIfFree(ctx, rel)
	_, err := out.Write(withContext(buf.Bytes(), note))
	return err
}

// claimIfFree claims rels but those a teammate holds now; a note for the model when it could not.
func (c *claimer) claimIfFree(ctx context.Context, rels ...string) string {
	write, cancel := context.WithTimeout(ctx, roomTimeout)
	defer cancel()
	unlock, err := lockClaims(filepath.Dir(c.env.SessionDir))
	if err != nil {
		return "prickle-runner could not claim " + strings.Join(rels, ", ") + " on Team Pulse (" + err.Error() + ")."
	}
	defer unlock()
	entries, err := c.room.Pulse(write, c.env.RunToken, c.ce.Project)
	if err != nil {
		return clip("prickle-runner could not claim "+strings.Join(rels, ", ")+" on Team Pulse ("+err.Error()+"): teammates are not warned off it.", 1000)
	}
	// The owner allowed the edit of a held file: the holder keeps it.
	free := slices.DeleteFunc(slices.Clone(rels), func(rel string) bool {
		return holderOf(entries, c.settings.Agent, c.root, rel, c.now(), window(c.settings)) != nil
	})
	return c.claim(write, entries, free...)
}

// claim adds rels to the task's claims and reports the agent's pulse with
// them (and what else its live pulse listed), the task and the branch; the
// claims lock is held. A note for the model when it could not.
func (c *claimer) claim(ctx context.Context, entries []pulse.Entry, rels ...string) string {
	for _, rel := range rels {
		if len(rel) > MaxPulseFile {
			return fmt.Sprintf("prickle-runner: %s is a path over %d characters; Team Pulse cannot list it, so it is not claimed.", clip(rel, 80)+"…", MaxPulseFile)
		}
	}
	if len(rels) == 0 {
		return ""
	}
	now, me, win := c.now(), c.settings.Agent, window(c.settings)
	prev, _ := LoadClaims(c.env.SessionDir) // unreadable: the task starts claiming afresh
	mine := []string{}
	if prev.Project == c.ce.Project && prev.TaskID == c.ce.TaskID {
		for _, f := range prev.Files {
			// A file a teammate took since (this task's pulse went stale) is not claimed again.
			if holderOf(entries, me, c.root, f, now, win) == nil {
				mine = append(mine, f)
			}
		}
	}
	for _, rel := range rels {
		mine = withFile(mine, rel)
	}
	what := rels[0]
	if len(rels) > 1 {
		what = fmt.Sprintf("%s and %d more files", rels[0], len(rels)-1)
	}
	_ = SaveClaims(c.env.SessionDir, Claims{Agent: me, Project: c.ce.Project, TaskID: c.ce.TaskID, Files: mine, UpdatedAt: now.UTC()})
	u := PulseUpdate{Project: c.ce.Project, Availability: "working", Doing: "Editing " + what, TaskID: &c.ce.TaskID, Files: mine}
	if own := ownEntry(entries, me, now, win); own != nil {
		u.Files = pulseFiles(own.Files, mine)
		if own.TaskID != nil && *own.TaskID == c.ce.TaskID {
			// What the agent itself said of this task stays.
			u.Availability, u.LastDecision = own.Availability, own.LastDecision
			if own.Doing != "" {
				u.Doing = own.Doing
			}
		}
	}
	if b := gitBranch(ctx, c.root); b != "" {
		b = clip(b, 200)
		u.Branch = &b
	}
	if err := c.room.UpdatePulse(ctx, c.env.RunToken, u); err != nil {
		return clip("prickle-runner could not claim "+what+" on Team Pulse ("+err.Error()+"): teammates are not warned off it.", 1000)
	}
	return ""
}

// reasoned asks the owner with a reason: why a call the allow-list covers is asked.
type reasoned struct {
	Steps
	reason string
}

func (r reasoned) RequestStep(ctx context.Context, token string, a StepAsk) (StepAnswer, error) {
	a.Reason = r.reason
	return r.Steps.RequestStep(ctx, token, a)
}

// goesAhead reads a PreToolUse answer: no answer (Claude Code's own check
// decides, and the allow-list covers the call) or allow; updated is the
// input the owner allowed, if it differs.
func goesAhead(answer []byte) (ahead bool, updated json.RawMessage) {
	if len(bytes.TrimSpace(answer)) == 0 {
		return true, nil
	}
	var o hookOutput
	if json.Unmarshal(answer, &o) != nil {
		return false, nil
	}
	return o.HookSpecificOutput.Decision == "allow", o.HookSpecificOutput.UpdatedInput
}

// withContext adds note to a PreToolUse answer as additionalContext, which
// Claude Code gives the model; with no answer, the answer is the note alone
// (no decision: Claude Code's own check decides).
func withContext(answer []byte, note string) []byte {
	if note == "" {
		return answer
	}
	o := map[string]any{}
	if len(bytes.TrimSpace(answer)) > 0 && json.Unmarshal(answer, &o) != nil {
		return answer
	}
	spec, _ := o["hookSpecificOutput"].(map[string]any)
	if spec == nil {
		spec = map[string]any{"hookEventName": "PreToolUse"}
	}
	spec["additionalContext"] = note
	o["hookSpecificOutput"] = spec
	b, err := json.Marshal(o)
	if err != nil {
		return answer
	}
	return append(b, '\n')
}
