package runner

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/useprickle/prickle/shared/domain/pulse"
)

// File claims in the gate of the qwen, gemini, copilot and opencode
// templates: the same rule as Claude Code's hook (claimhook.go), with the
// CLI's own edit tools. Before an edit call of a file in the project's repository the gate
// reads Team Pulse: a file a teammate holds is stopped (deny), asked of
// the owner with the holder named (ask), or let through with the holder
// named (warn); a free file is claimed once the call goes ahead. After a
// shell call (the CLI's post-tool hook, `prickle-runner hook --cli <name>
// --after`; opencode's plugin runs it after its bash) what the shell
// changed in the work tree is claimed (shellclaims.go). A CLI joins by implementing claimingCLI; one that does
// not is gated as before, and its shell's changes are claimed at the run's
// end.

// AfterHookFlag marks the post-tool hook: `prickle-runner hook --cli <name> --after`.
const AfterHookFlag = "--after"

// claimingCLI is a CLI whose edits the gate claims and guards.
type claimingCLI interface {
	// editedFile is the file an edit call writes ("" for a call that is no
	// edit of a named file).
	editedFile(tool string, input json.RawMessage) string
	// shellTool says whether a tool runs commands (its changes are read
	// from the work tree after it).
	shellTool(tool string) bool
	// afterAnswer is the post-tool hook's answer: note (if any) for the model.
	afterAnswer(note string) []byte
}

// multiFileCLI is a claiming CLI one of whose edit calls may write several
// files (opencode's apply_patch): each is guarded and claimed.
type multiFileCLI interface {
	editedFiles(tool string, input json.RawMessage) []string
}

// editedFiles is every file an edit call of cc writes (none for a call
// that is no edit of a named file).
func editedFiles(cc claimingCLI, tool string, input json.RawMessage) []string {
	if m, ok := cc.(multiFileCLI); ok {
		return m.editedFiles(tool, input)
	}
	if f := cc.editedFile(tool, input); f != "" {
		return []string{f}
	}
	return nil
}

// editedPath is the file an edit tool (one of tools) names under key; "" for any other tool.
func editedPath(tool string, input json.RawMessage, key string, tools ...string) string {
	if !slices.Contains(tools, tool) {
		return ""
	}
	return fileArg(input, key)
}

// fileArg is the path an edit tool's input names under one of keys.
func fileArg(input json.RawMessage, keys ...string) string {
	var in map[string]any
	if json.Unmarshal(input, &in) != nil {
		return ""
	}
	for _, k := range keys {
		if s, ok := in[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

// openClaimer is what claims a run's call need: its repository root and
// its project's settings. Nil (no error) when the run cannot claim (no run
// token, project, directory or session dir) or Prickle has no file claims.
func openClaimer(ctx context.Context, env HookEnv, ce ClaimEnv, room Room, cwd string) (*claimer, error) {
	if room == nil || env.RunToken == "" || env.SessionDir == "" || ce.Project == "" || ce.ProjectDir == "" {
		return nil, nil
	}
	c := &claimer{env: env, ce: ce, room: room, now: time.Now, root: repoRoot(ctx, ce.ProjectDir), cwd: cwd}
	if c.cwd == "" {
		c.cwd = ce.ProjectDir
	}
	read, cancel := context.WithTimeout(ctx, roomTimeout)
	defer cancel()
	s, err := room.ClaimSettings(read, env.RunToken, ce.Project)
	if errors.Is(err, ErrNoClaims) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	c.settings = s
	return c, nil
}

// editGuard is the claims' word on one edit call before the gate decides it.
type editGuard struct {
	c *claimer
	// rels are the call's files in the repository; rel is the one a
	// teammate holds (the first) when holder is set.
	rels   []string
	rel    string
	holder *holding
	// deny stops the call; ask takes it to the owner even when allow-listed,
	// with reason; note is said to the model when it goes ahead.
	deny, reason string
	ask          bool
	note         string
}

// guardEdit applies the file-claims rule to an edit call of a claiming CLI.
func guardEdit(ctx context.Context, cli agentCLI, call gateCall, env HookEnv, ce ClaimEnv, room Room) editGuard {
	cc, ok := cli.(claimingCLI)
	if !ok {
		return editGuard{}
	}
	files := editedFiles(cc, call.Tool, call.Input)
	if len(files) == 0 {
		return editGuard{}
	}
	c, err := openClaimer(ctx, env, ce, room, "")
	if err != nil {
		return editGuard{deny: clip("prickle-runner could not read the project's file claims ("+err.Error()+
			"); the edit was not made. Try it again in a moment, or checkpoint and end your turn.", 1000)}
	}
	if c == nil {
		return editGuard{}
	}
	rels := c.rels(files)
	if len(rels) == 0 {
		return editGuard{} // outside the repository: never claimed, never guarded
	}
	g := editGuard{c: c, rels: rels}
	read, cancel := context.WithTimeout(ctx, roomTimeout)
	defer cancel()
	entries, err := room.Pulse(read, env.RunToken, ce.Project)
	if err != nil {
		why := "prickle-runner could not read Team Pulse (" + err.Error() + ")"
		if c.settings.FileGuard == pulse.GuardWarn {
			g.c, g.note = nil, clip(why+"; this edit was not checked against your teammates' files.", 1000)
			return g
		}
		g.deny = clip(why+"; the edit was not made. Try it again in a moment, or checkpoint and end your turn.", 1000)
		return g
	}
	now := c.now()
	for _, rel := range rels {
		if h := holderOf(entries, c.settings.Agent, c.root, rel, now, window(c.settings)); h != nil {
			g.holder, g.rel = h, rel
			break
		}
	}
	if g.holder == nil {
		return g
	}
	rel := g.rel
	switch c.settings.FileGuard {
	case pulse.GuardWarn:
		g.reason, g.note = g.holder.asked(rel, now), g.holder.warned(rel, now)
	case pulse.GuardAsk:
		g.reason, g.ask = g.holder.asked(rel, now), true
	default:
		g.deny = clip(g.holder.denied(rel, now), 1000)
	}
	return g
}

// goneAhead is what follows an edit the gate let through (with input, the
// owner's edit, if any): its free files are claimed unless a teammate took
// them meanwhile (a held one stays its holder's); a note for the model.
func (g editGuard) goneAhead(ctx context.Context, cli agentCLI, tool string, input json.RawMessage) string {
	if g.c == nil {
		return g.note
	}
	rels := g.rels
	if cc, ok := cli.(claimingCLI); ok && len(input) > 0 {
		if r := g.c.rels(editedFiles(cc, tool, input)); len(r) > 0 {
			rels = r
		}
	}
	rels = slices.DeleteFunc(slices.Clone(rels), func(r string) bool { return g.holder != nil && r == g.rel })
	if len(rels) == 0 {
		return g.note
	}
	return joinNotes(g.note, g.c.claimIfFree(ctx, rels...))
}

// rels are files' paths in the repository (those outside it left out,
// each once).
func (c *claimer) rels(files []string) []string {
	var out []string
	for _, f := range files {
		if rel, ok := claimPath(c.root, c.cwd, f); ok && !slices.Contains(out, rel) {
			out = append(out, rel)
		}
	}
	return out
}

// steps is the owner's Steps for this call: with the holder named as the reason.
func (g editGuard) steps(s Steps) Steps {
	if g.reason == "" {
		return s
	}
	return reasoned{Steps: s, reason: g.reason}
}

// AgentAfterHook is `prickle-runner hook --cli <name> --after`, the CLI's
// post-tool hook: after a shell call it claims what the call changed in the
// work tree. It always answers (with nothing to say when there is nothing)
// and exits 0: the call has already run.
func AgentAfterHook(ctx context.Context, cliName string, in io.Reader, out io.Writer, getenv func(string) string) int {
	cli, ok := agentCLIs[cliName]
	if !ok {
		return 0
	}
	room := RunMCP(getenv("PRICKLE_MCP_URL"), roomTimeout)
	note := afterCall(ctx, cli, in, HookEnvFrom(getenv), ClaimEnvFrom(getenv), room)
	if cc, ok := cli.(claimingCLI); ok {
		_, _ = out.Write(append(cc.afterAnswer(note), '\n'))
	}
	return 0
}

// afterCall claims what a shell call changed; the note for the model.
func afterCall(ctx context.Context, cli agentCLI, in io.Reader, env HookEnv, ce ClaimEnv, room Room) string {
	cc, ok := cli.(claimingCLI)
	if !ok {
		return ""
	}
	b, err := io.ReadAll(io.LimitReader(in, maxHookInput+1))
	if err != nil || len(b) > maxHookInput {
		return ""
	}
	call, err := cli.parse(b)
	if err != nil || !cc.shellTool(call.Tool) {
		return ""
	}
	return shellChanged(ctx, env, ce, room)
}

// shellChanged claims what the work tree shows changed since its last
// picture (shellclaims.go); nothing in a work dir that is no git checkout.
func shellChanged(ctx context.Context, env HookEnv, ce ClaimEnv, room Room) string {
	if room == nil || env.RunToken == "" || env.SessionDir == "" || ce.Project == "" || ce.ProjectDir == "" {
		return ""
	}
	root := gitRoot(ctx, ce.ProjectDir)
	if root == "" {
		return ""
	}
	unlock, err := lockClaims(filepath.Dir(env.SessionDir))
	if err != nil {
		return ""
	}
	defer unlock()
	changed, partial := treeChanges(ctx, env.SessionDir, root)
	if len(changed) == 0 {
		return "" // nothing changed: Prickle is not called
	}
	c, err := openClaimer(ctx, env, ce, room, "")
	if err != nil {
		return clip("prickle-runner could not read the project's file claims ("+err.Error()+"); what your command changed is not claimed.", 1000)
	}
	if c == nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, roomTimeout)
	defer cancel()
	return c.claimShellChanges(ctx, changed, partial)
}

// AgentHookAfter reads `--after` from a hook's arguments.
func AgentHookAfter(args []string) bool { return slices.Contains(args, AfterHookFlag) }

// afterCommand is the post-tool hook command a CLI's settings name: its
// failure only leaves the shell's changes to the next comparison.
func afterCommand(self, cli string) string {
	return shellQuote(self) + " " + HookCommand + " " + AgentHookFlag + " " + cli + " " + AfterHookFlag + " || true"
}

// joinNotes joins the notes that are not empty, one a line.
func joinNotes(notes ...string) string {
	return strings.Join(slices.DeleteFunc(notes, func(n string) bool { return n == "" }), "\n")
}

// afterContext is a post-tool answer in the form Claude Code, Qwen Code and
// Gemini CLI read: note as hookSpecificOutput.additionalContext ("{}" for none).
func afterContext(event, note string) []byte {
	if note == "" {
		return []byte("{}")
	}
	b, _ := json.Marshal(map[string]any{"hookSpecificOutput": map[string]string{"hookEventName": event, "additionalContext": note}})
	return b
}
