package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// The gate of the qwen, gemini, copilot and opencode templates:
// `prickle-runner hook --cli <name>` is the CLI's pre-tool hook (Qwen Code's
// PreToolUse, Gemini CLI's BeforeTool, Copilot CLI's preToolUse; opencode's
// is the run's plugin, which runs it, see opencode.go). A call of a tool in the run's
// allow-list passes; any other is asked of the owner with request_step and
// the run's token:
//
//   - allowed → the call runs; an owner's edit runs as edited where the CLI
//     applies an edited input (gemini, copilot, opencode); Qwen Code ignores one, so
//     there the call is denied with the edited call quoted, which the model
//     makes next and which is then allowed once;
//   - refused → denied with the owner's message, which reaches the model;
//   - still waiting → the hook holds the call, asking again, while the CLI
//     lets a hook run (agentCLI.holdLimit); then denies with "still waiting:
//     checkpoint, then end your turn", and records the call (asked.json) so
//     that the task's next run is told it, quoted, and makes it again: the
//     same step, allowed once.
//
// Fail closed: all three CLIs run the call when a hook answers with
// anything but a well-formed decision (Qwen Code and Gemini CLI also on exit
// 1, and every one of them when the hook outlives its timeout). So the gate
// always writes exactly one well-formed answer, a deny on any error, within
// its own bound (gateLimit, below the CLI's timeout); and the CLI runs it
// through gateCommand's shell wrapper, which denies (exit 2, the message on
// stderr) when the runner's binary crashes or is killed.

// AgentHookFlag selects the CLI of `prickle-runner hook --cli <name>`.
const AgentHookFlag = "--cli"

// gateFaultEnv makes the gate fail on purpose (exit1, panic, kill, hang,
// garbage-free: only ways a gate can fail), for the tests that prove a failed
// gate denies. It can only make a call be denied. (PRICKLE_* variables are
// not passed to runs, hence its name.)
const gateFaultEnv = "TEST_PRICKLE_GATE_FAULT"

// gateCall is one call as a CLI's hook input gives it.
type gateCall struct {
	Tool  string
	Input json.RawMessage
	// CallID is the model's id of the call when the CLI gives it (qwen),
	// else one the gate makes up (request_step needs one to allow a call).
	CallID string
	// Skip is set for an input the gate does not judge (another event).
	Skip bool
}

// gateAnswer is what the gate tells the CLI.
type gateAnswer struct {
	Allow bool
	// Reason is the deny's message for the model (or the allow's reason).
	Reason string
	// Input, on an allow, is the owner's edit of the call (nil: as asked).
	Input json.RawMessage
	// Note tells the model its call was edited (where the CLI shows it).
	Note string
}

// agentCLI is one CLI's side of the gate: its hook input and answers.
type agentCLI interface {
	name() string
	// parse reads the CLI's hook input.
	parse(b []byte) (gateCall, error)
	// answer is the CLI's well-formed hook output for a.
	answer(a gateAnswer) []byte
	// edits says whether the CLI runs an allowed call with an edited input.
	edits() bool
	// hookTimeout is the timeout the template gives the hook in the CLI's
	// settings; the CLI runs the call when the hook outlives it, and
	// gateLimit is well below it.
	hookTimeout() time.Duration
	// gateLimit bounds the gate's whole answer; holdLimit how long it holds a
	// pending call asking again.
	gateLimit() time.Duration
}

// agentCLIs are the templates whose gate this is, by name.
var agentCLIs = map[string]agentCLI{
	TemplateQwen:     qwenTemplate,
	TemplateGemini:   geminiTemplate,
	TemplateCopilot:  copilotTemplate,
	TemplateOpencode: opencodeTemplate,
}

// gateStepTimeout bounds one request_step call of the gate.
const gateStepTimeout = 10 * time.Second

// gatePoll is the first wait before asking a pending step again; it
// doubles up to gatePollMax.
const (
	gatePoll    = 2 * time.Second
	gatePollMax = 8 * time.Second
)

// gateFailed is the message of a gate that failed: the call was not made.
const gateFailed = "prickle-runner's gate failed, so the call was not made. Checkpoint and end your turn."

// Still waiting is request_step's word for a pending step; the gate says it
// when it stops holding a call.
const gateStillWaiting = "still waiting for your owner's decision on this call: checkpoint, then end your turn; you will be woken when they decide, and told to make exactly this call again."

// AgentHook is `prickle-runner hook --cli <name>`: it answers one hook call
// of the CLI, always with one well-formed answer on out (a deny on any
// error), within the CLI's gateLimit; it returns the process's exit status.
func AgentHook(ctx context.Context, cliName string, in io.Reader, out io.Writer, getenv func(string) string) int {
	cli, ok := agentCLIs[cliName]
	if !ok {
		// No CLI to answer in its own form: exit 2 with the message on
		// stderr denies on every CLI the gate serves.
		return 2
	}
	steps := RunMCP(getenv("PRICKLE_MCP_URL"), gateStepTimeout)
	claims := gateClaims{ce: ClaimEnvFrom(getenv), room: RunMCP(getenv("PRICKLE_MCP_URL"), roomTimeout)}
	return runGateWith(ctx, cli, in, out, HookEnvFrom(getenv), steps, claims, getenv(gateFaultEnv), cli.gateLimit(), listening(out))
}

// gateClaims is what the gate claims and guards edits with (claimgate.go):
// a zero gateClaims claims nothing.
type gateClaims struct {
	ce   ClaimEnv
	room Room
}

// onceWriter writes one answer only: the first of the gate's own answer and
// the watchdog's deny.
type onceWriter struct {
	mu   sync.Mutex
	done bool
	out  io.Writer
}

func (w *onceWriter) write(b []byte) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return false
	}
	w.done = true
	_, err := w.out.Write(b)
	return err == nil
}

// runGate answers one hook call within limit: when the gate has not
// answered by then, the deny is written and the gate returns at once (its
// asks are left to the context's end).
// alive says whether the CLI still waits for the answer (nil: assume so).
func runGate(ctx context.Context, cli agentCLI, in io.Reader, out io.Writer, env HookEnv, steps Steps, fault string, limit time.Duration, alive func() bool) int {
	return runGateWith(ctx, cli, in, out, env, steps, gateClaims{}, fault, limit, alive)
}

// runGateWith is runGate with file claims.
func runGateWith(ctx context.Context, cli agentCLI, in io.Reader, out io.Writer, env HookEnv, steps Steps, claims gateClaims, fault string, limit time.Duration, alive func() bool) int {
	w := &onceWriter{out: out}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	done := make(chan gateAnswer, 1)
	go func() {
		a, err := gate(ctx, cli, in, env, steps, claims, fault, alive)
		if err != nil {
			a = gateAnswer{Reason: clip(gateFailed+" ("+err.Error()+")", 1000)}
		}
		done <- a
	}()
	var a gateAnswer
	select {
	case a = <-done:
	case <-ctx.Done():
		a = gateAnswer{Reason: gateStillWaitingOr(ctx)}
	}
	if !w.write(append(cli.answer(a), '\n')) {
		return 2
	}
	return 0
}

func gateStillWaitingOr(ctx context.Context) string {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return "prickle-runner's gate ran out of time, so the call was not made: " + gateStillWaiting
	}
	return gateFailed
}

// gate decides one call.
func gate(ctx context.Context, cli agentCLI, in io.Reader, env HookEnv, steps Steps, claims gateClaims, fault string, alive func() bool) (gateAnswer, error) {
	switch fault {
	case "":
	case "hang":
		<-ctx.Done()
		return gateAnswer{}, ctx.Err()
	default:
		gateFault(fault)
	}
	b, err := io.ReadAll(io.LimitReader(in, maxHookInput+1))
	if err != nil {
		return gateAnswer{}, fmt.Errorf("read the hook's input: %w", err)
	}
	if len(b) > maxHookInput {
		return gateAnswer{Reason: fmt.Sprintf("prickle-runner: the call's input is over %d bytes; it was not asked and not made", maxHookInput)}, nil
	}
	c, err := cli.parse(b)
	if err != nil {
		return gateAnswer{}, err
	}
	if c.Skip {
		return gateAnswer{Allow: true}, nil
	}
	g := guardEdit(ctx, cli, c, env, claims.ce, claims.room)
	if g.deny != "" {
		return gateAnswer{Reason: g.deny}, nil
	}
	if !g.ask && allowListed(c.Tool, env.Allowed) {
		return gateAnswer{Allow: true, Note: g.goneAhead(ctx, cli, c.Tool, nil)}, nil
	}
	steps = g.steps(steps)
	if env.RunToken == "" {
		return gateAnswer{Reason: "prickle-runner: this run has no run token; nothing can be asked of your owner, so the call was not made"}, nil
	}
	if len(c.Input) == 0 || string(c.Input) == "null" {
		c.Input = json.RawMessage(`{}`)
	}
	if c.CallID == "" {
		if c.CallID, err = newSessionID(); err != nil {
			return gateAnswer{}, err
		}
		c.CallID = cli.name() + "-" + c.CallID
	}
	ask := StepAsk{ToolName: c.Tool, Input: c.Input, ToolUseID: clip(c.CallID, 200)}
	// Best effort: the next run quotes this call when it was left waiting, also
	// when this gate is killed while it holds the call (hence once it is asked).
	saveAsked := func(ans StepAnswer) {
		if env.SessionDir != "" && ans.StepID != "" {
			_ = SaveAsked(env.SessionDir, Asked{Call: Call{ToolUseID: ask.ToolUseID, Name: ask.ToolName, Input: ask.Input}, StepID: ans.StepID, Status: ans.Status, At: time.Now().UTC()})
		}
	}
	ans, err := holdDecision(ctx, steps, env.RunToken, ask, cli.edits(), holdHooks{alive: alive, asked: saveAsked})
	saveAsked(ans)
	switch {
	case errors.Is(err, ErrRefused):
		return gateAnswer{Reason: clip(err.Error(), 1000)}, nil
	case err != nil && ctx.Err() != nil:
		return gateAnswer{Reason: gateStillWaiting}, nil
	case err != nil:
		return gateAnswer{Reason: clip("prickle-runner could not ask your owner ("+err.Error()+"); the call was not made. Checkpoint and end your turn.", 1000)}, nil
	case ans.Status == "pending":
		return gateAnswer{Reason: gateStillWaiting}, nil
	case ans.Status == "approved" && edited(ask.ToolName, ask.Input, ans.UpdatedInput) && !cli.edits():
		// The approval stays for the edited call, which the model makes next.
		return gateAnswer{Reason: editedCallMessage(ask.ToolName, ans.UpdatedInput, ans.Message)}, nil
	case ans.Behavior == "allow" && edited(ask.ToolName, ask.Input, ans.UpdatedInput):
		note := "Prickle: your owner edited this call before allowing it; it ran as " + string(ans.UpdatedInput)
		return gateAnswer{Allow: true, Reason: ans.Message, Input: ans.UpdatedInput, Note: joinNotes(note, g.goneAhead(ctx, cli, c.Tool, ans.UpdatedInput))}, nil
	case ans.Behavior == "allow":
		return gateAnswer{Allow: true, Reason: ans.Message, Note: g.goneAhead(ctx, cli, c.Tool, nil)}, nil
	}
	msg := ans.Message
	if msg == "" {
		msg = "your owner did not allow this call; it was not made"
	}
	return gateAnswer{Reason: msg}, nil
}

// editedCallMessage tells the model (of a CLI that cannot run an edited
// call in place of the asked one) the call its owner approved instead.
func editedCallMessage(tool string, input json.RawMessage, message string) string {
	s := "Your owner edited this call before approving it, so it was not made as you asked. Make exactly this call now instead (it is approved once):\n" +
		"  tool: " + tool + "\n  input: " + string(input)
	if cmd, ok := commandOf(input); ok {
		s += "\n  (the command: " + cmd + ")"
	}
	if message != "" {
		s += "\nYour owner said: " + message
	}
	return clip(s, 4000)
}

// commandOf is the command of a shell call's input.
func commandOf(input json.RawMessage) (string, bool) {
	var in struct {
		Command string `json:"command"`
	}
	if json.Unmarshal(input, &in) != nil || in.Command == "" {
		return "", false
	}
	return in.Command, true
}

// holdDecision asks request_step until the owner has decided or ctx is
// nearly out. It looks first without the call id (an approval is then
// answered "approved" and nothing is used): an approval of the call as asked
// is then taken with the call id, which uses it once; an approval of an edit
// is taken the same way by a CLI that runs edits, else left for the edited
// call the model is told to make. Nothing is taken, and the hold ends, once
// the CLI is gone (h.alive): the approval stays for the run that makes the
// call again.
func holdDecision(ctx context.Context, steps Steps, token string, ask StepAsk, takeEdits bool, h holdHooks) (StepAnswer, error) {
	look := ask
	look.ToolUseID = ""
	wait := gatePoll
	for first := true; ; first = false {
		ans, err := askStep(ctx, steps, token, look)
		if err != nil {
			return ans, err
		}
		if ans.Status != "pending" {
			if ans.Status == "approved" && (takeEdits || !edited(ask.ToolName, ask.Input, ans.UpdatedInput)) && h.cliAlive() {
				return askStep(ctx, steps, token, ask) // an allow, used once
			}
			return ans, nil
		}
		if first && h.asked != nil {
			h.asked(ans)
		}
		deadline, ok := ctx.Deadline()
		// Another look may be followed by a take: both must end before the
		// gate's limit, or an approval could be used by a call then denied.
		if (ok && time.Until(deadline) < wait+2*gateStepTimeout) || !h.cliAlive() {
			return ans, nil // still pending: deny while there is time to say so
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ans, nil
		case <-t.C:
		}
		wait = min(2*wait, gatePollMax)
	}
}

// holdHooks are what holdDecision tells and asks its gate: asked, once the
// call is known pending; alive, whether the CLI still waits for the answer.
type holdHooks struct {
	asked func(StepAnswer)
	alive func() bool
}

func (h holdHooks) cliAlive() bool { return h.alive == nil || h.alive() }

func askStep(ctx context.Context, steps Steps, token string, ask StepAsk) (StepAnswer, error) {
	c, cancel := context.WithTimeout(ctx, gateStepTimeout)
	defer cancel()
	return steps.RequestStep(c, token, ask)
}

// gateCommand is the hook command a CLI's settings name: the runner's own
// gate, and a deny when it fails (exit 2 with the message on stderr denies
// on all three CLIs; a crash or a kill is a non-zero exit).
func gateCommand(self, cli string) string {
	return shellQuote(self) + " " + HookCommand + " " + AgentHookFlag + " " + cli +
		" || { echo " + shellQuote(gateFailed) + " >&2; exit 2; }"
}

// AgentHookCLI reads `--cli <name>` from a hook's arguments ("" for the
// Claude Code hook).
func AgentHookCLI(args []string) string {
	for i, a := range args {
		if a == AgentHookFlag && i+1 < len(args) {
			return args[i+1]
		}
		if v, ok := strings.CutPrefix(a, AgentHookFlag+"="); ok {
			return v
		}
	}
	return ""
}
