package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/useprickle/prickle/shared/domain/step"
)

// The hook: Claude Code runs `prickle-runner hook` before every tool call of
// a woken run (PreToolUse, installed by the claude template). A call of a
// tool in the run's allow-list passes untouched; any other is asked of the
// owner with request_step and the run's token, and the answer decides:
//
//   - allowed → the call runs (with the input the owner allowed: when the
//     owner edited the call, the edited call runs instead, and the model is
//     told so beside its result);
//   - refused → the call is denied with the owner's message;
//   - still waiting → the run pauses on this very call ("defer"): Claude Code
//     ends the run, and the runner resumes the session when the owner
//     decides, which asks the same call (same tool_use_id, same input) again.
//
// Claude Code pauses only on a message with one tool call; a call made
// beside others is denied with request_step's "still waiting" instead, and
// the resumed conversation is told the asked call to make again.

// HookCommand is the subcommand of prickle-runner that is the hook.
const HookCommand = "hook"

// HookInput is the part of Claude Code's PreToolUse hook input the hook reads.
type HookInput struct {
	Event          string          `json:"hook_event_name"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolUseID      string          `json:"tool_use_id"`
	SessionID      string          `json:"session_id"`
	TranscriptPath string          `json:"transcript_path"`
}

// hookOutput is Claude Code's PreToolUse answer.
type hookOutput struct {
	HookSpecificOutput struct {
		HookEventName string          `json:"hookEventName"`
		Decision      string          `json:"permissionDecision"`
		Reason        string          `json:"permissionDecisionReason"`
		UpdatedInput  json.RawMessage `json:"updatedInput,omitempty"`
		// AdditionalContext is a note Claude Code adds to the conversation.
		AdditionalContext string `json:"additionalContext,omitempty"`
	} `json:"hookSpecificOutput"`
}

// HookEnv is what the hook reads of the run's environment.
type HookEnv struct {
	RunToken   string
	Allowed    []string
	SessionDir string
}

// HookEnvFrom reads the run's PRICKLE_* variables.
func HookEnvFrom(getenv func(string) string) HookEnv {
	var allowed []string
	if a := getenv("PRICKLE_ALLOWED_TOOLS"); a != "" {
		allowed = strings.Split(a, ",")
	}
	return HookEnv{RunToken: getenv("PRICKLE_RUN_TOKEN"), Allowed: allowed, SessionDir: getenv("PRICKLE_SESSION_DIR")}
}

// Hook is `prickle-runner hook`: one PreToolUse call of the run whose
// environment getenv reads, asked of Prickle at its PRICKLE_MCP_URL; an
// edit is guarded and claims its file (claimhook.go).
func Hook(ctx context.Context, in io.Reader, out io.Writer, getenv func(string) string) error {
	prickle := RunMCP(getenv("PRICKLE_MCP_URL"), (hookTimeoutSeconds-10)*time.Second)
	return GuardedHook(ctx, in, out, HookEnvFrom(getenv), ClaimEnvFrom(getenv), prickle, prickle)
}

// maxHookInput bounds the hook's input: a step's input is at most 64 KiB.
const maxHookInput = 1 << 20

// RunHook answers one PreToolUse call: it reads the input from in and
// writes the decision to out; nothing for a call it lets pass.
func RunHook(ctx context.Context, in io.Reader, out io.Writer, env HookEnv, asker Steps) error {
	b, err := io.ReadAll(io.LimitReader(in, maxHookInput+1))
	if err != nil {
		return fmt.Errorf("hook: read input: %w", err)
	}
	var h HookInput
	if len(b) > maxHookInput {
		return writeHook(out, "deny", fmt.Sprintf("prickle-runner: the call's input is over %d bytes; it was not asked and not made", maxHookInput), nil)
	}
	if err := json.Unmarshal(b, &h); err != nil {
		return writeHook(out, "deny", "prickle-runner: the hook's input is not JSON; the call was not made", nil)
	}
	if h.Event != "" && h.Event != "PreToolUse" {
		return nil
	}
	if allowListed(h.ToolName, env.Allowed) {
		return nil // Claude Code's own check decides: the allow-list names this tool
	}
	if env.RunToken == "" {
		return writeHook(out, "deny", "prickle-runner: this run has no run token (PRICKLE_RUN_TOKEN); nothing can be asked of your owner, so the call was not made", nil)
	}
	input := h.ToolInput
	if len(input) == 0 {
		input = json.RawMessage(`{}`)
	}
	ask, cancel := context.WithTimeout(ctx, (hookTimeoutSeconds-10)*time.Second)
	defer cancel()
	a, err := asker.RequestStep(ask, env.RunToken, StepAsk{ToolName: h.ToolName, Input: input, ToolUseID: h.ToolUseID})
	if err != nil {
		return writeHook(out, "deny", clip("prickle-runner could not ask your owner ("+err.Error()+"); the call was not made. Checkpoint and end your turn.", 1000), nil)
	}
	if env.SessionDir != "" {
		// Best effort: a resume that cannot pause quotes this call.
		_ = SaveAsked(env.SessionDir, Asked{Call: Call{ToolUseID: h.ToolUseID, Name: h.ToolName, Input: input}, StepID: a.StepID, Status: a.Status, At: time.Now().UTC()})
	}
	switch {
	case a.Behavior == "allow" && edited(h.ToolName, input, a.UpdatedInput):
		// The owner edited the call: the edited call runs, and the model,
		// which reads no reason of an allow, is told why its result differs.
		return writeHookNote(out, "allow", a.Message, a.UpdatedInput, "Prickle: "+a.Message)
	case a.Behavior == "allow":
		return writeHook(out, "allow", a.Message, a.UpdatedInput)
	case a.Status == "pending" && soleCall(ctx, h.TranscriptPath, h.ToolUseID):
		return writeHook(out, "defer", a.Message, nil)
	}
	return writeHook(out, "deny", a.Message, nil)
}

// allowListed reports whether the run's allow-list names the tool: by name
// (`Read`), by a rule for it (`Bash(npm test:*)`, which Claude Code's own
// check applies: a call outside the rule goes to the permission prompt tool,
// which asks the owner without pausing), or by its MCP server (`mcp__github`).
func allowListed(tool string, allowed []string) bool {
	for _, a := range allowed {
		if a == tool || strings.HasPrefix(a, tool+"(") || (strings.HasPrefix(a, "mcp__") && strings.HasPrefix(tool, a+"__")) {
			return true
		}
	}
	return false
}

func writeHook(out io.Writer, decision, reason string, updated json.RawMessage) error {
	return writeHookNote(out, decision, reason, updated, "")
}

// writeHookNote is writeHook with a note for the conversation.
func writeHookNote(out io.Writer, decision, reason string, updated json.RawMessage, note string) error {
	var o hookOutput
	o.HookSpecificOutput.HookEventName = "PreToolUse"
	o.HookSpecificOutput.Decision = decision
	o.HookSpecificOutput.Reason = reason
	o.HookSpecificOutput.UpdatedInput = updated
	o.HookSpecificOutput.AdditionalContext = note
	b, err := json.Marshal(o)
	if err != nil {
		return fmt.Errorf("hook: encode answer: %w", err)
	}
	_, err = out.Write(append(b, '\n'))
	return err
}

// maxTranscriptTail is how much of the end of a session's transcript the
// hook reads to find the message its call belongs to.
const maxTranscriptTail = 8 << 20

// transcriptWait bounds how long the hook waits for Claude Code to write
// the call's message to the session's transcript (it writes it as the
// hook starts, and a loaded machine delays it), and transcriptPoll is how
// often it looks.
const (
	transcriptWait = 5 * time.Second
	transcriptPoll = 50 * time.Millisecond
)

// soleCall reports whether the call toolUseID is the only tool call of its
// model message, read from the session's transcript (JSON lines; each
// content block of a complete message is a line with the message's id).
// Only then can Claude Code pause on it: with several, it drops the others
// on resume. Unknown (no transcript, the call not written within
// transcriptWait) is false: never risk a call.
func soleCall(ctx context.Context, transcript, toolUseID string) bool {
	if transcript == "" || toolUseID == "" {
		return false
	}
	deadline := time.Now().Add(transcriptWait)
	for {
		calls, found := callsOfMessage(transcript, toolUseID)
		if found {
			return calls == 1
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		time.Sleep(transcriptPoll)
	}
}

// callsOfMessage counts the tool calls of the model message that holds
// toolUseID in the transcript; found is false when no message holds it yet.
func callsOfMessage(transcript, toolUseID string) (calls int, found bool) {
	f, err := os.Open(transcript)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > maxTranscriptTail {
		if _, err := f.Seek(-maxTranscriptTail, io.SeekEnd); err != nil {
			return 0, false
		}
	}
	b, err := io.ReadAll(io.LimitReader(f, maxTranscriptTail))
	if err != nil {
		return 0, false
	}
	type block struct {
		Type string `json:"type"`
		ID   string `json:"id"`
	}
	type entry struct {
		Type    string `json:"type"`
		Message struct {
			ID      string          `json:"id"`
			Content json.RawMessage `json:"content"`
		} `json:"message"`
	}
	ids := map[string][]string{} // message id → its tool_use ids
	message := ""
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		if !bytes.Contains(line, []byte(`"tool_use"`)) {
			continue
		}
		var e entry
		if json.Unmarshal(line, &e) != nil || e.Type != "assistant" || e.Message.ID == "" {
			continue
		}
		var blocks []block
		if json.Unmarshal(e.Message.Content, &blocks) != nil {
			continue
		}
		for _, bl := range blocks {
			if bl.Type != "tool_use" || slices.Contains(ids[e.Message.ID], bl.ID) {
				continue
			}
			ids[e.Message.ID] = append(ids[e.Message.ID], bl.ID)
			if bl.ID == toolUseID {
				message = e.Message.ID
			}
		}
	}
	if message == "" {
		return 0, false
	}
	return len(ids[message]), true
}

// edited reports whether the input an allow answer carries is another call
// than the one asked: the owner edited it. A reworded call (its descriptive
// fields, step.Identity) is the same call.
func edited(tool string, asked, allowed json.RawMessage) bool {
	if len(allowed) == 0 {
		return false
	}
	a, errA := step.Canonical(asked)
	b, errB := step.Canonical(allowed)
	if errA != nil || errB != nil {
		return !bytes.Equal(asked, allowed)
	}
	return !bytes.Equal(step.Identity(tool, a), step.Identity(tool, b))
}
