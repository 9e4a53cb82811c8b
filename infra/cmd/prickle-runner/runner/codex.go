package runner

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/useprickle/prickle/shared/domain/step"
)

// CodexRunCommand is the runner's subcommand that hosts a Codex run: the
// codex template starts `<prickle-runner> codex-run [flags]`.
const CodexRunCommand = "codex-run"

// How a Codex run's thread asks: every command but Codex's known-safe
// read-only ones, every file change and every MCP call Codex asks about
// goes to the owner, and what the owner allowed runs as asked (no sandbox
// that would make an approved command fail where the owner expected it to work).
const (
	codexApprovalPolicy = "untrusted"
	codexSandbox        = "danger-full-access"
)

// maxCodexTurns bounds the turns of one run: its prompt, then one more after
// each turn in which the owner refused a call (to tell the model why).
const maxCodexTurns = 8

// codexStopWait is how long Codex has to exit after its input closes, then after SIGTERM.
const codexStopWait = 5 * time.Second

// CodexOptions are codex-run's flags.
type CodexOptions struct {
	// Program is the Codex executable (default codex).
	Program string
	// Config are `-c key=value` overrides handed to `codex app-server`.
	Config []string
	// Poll is the first wait before asking request_step again while the
	// owner decides; each wait doubles, up to PollMax. SIGUSR1 asks at once.
	Poll, PollMax time.Duration
}

type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, " ") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

// ParseCodexArgs parses codex-run's arguments: --codex PATH, -c key=value
// (repeatable), --poll and --poll-max.
func ParseCodexArgs(args []string) (CodexOptions, error) {
	o := CodexOptions{}
	fs := flag.NewFlagSet(CodexRunCommand, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.Program, "codex", "codex", "the Codex executable")
	fs.Var((*repeated)(&o.Config), "c", "a config override for codex app-server (key=value, repeatable)")
	fs.DurationVar(&o.Poll, "poll", 5*time.Second, "first wait before asking the owner's decision again")
	fs.DurationVar(&o.PollMax, "poll-max", time.Minute, "longest wait before asking the owner's decision again")
	if err := fs.Parse(args); err != nil {
		return CodexOptions{}, fmt.Errorf("%s: %w", CodexRunCommand, err)
	}
	if fs.NArg() > 0 {
		return CodexOptions{}, fmt.Errorf("%s: unexpected argument %q (Codex's own settings go in -c key=value)", CodexRunCommand, fs.Arg(0))
	}
	if o.Poll <= 0 || o.PollMax < o.Poll {
		return CodexOptions{}, fmt.Errorf("%s: --poll %s must be positive and --poll-max %s at least as long", CodexRunCommand, o.Poll, o.PollMax)
	}
	return o, nil
}

// codexEnv is a run's inputs, from the environment the runner gives it.
type codexEnv struct {
	MCPURL, RunToken, RunID, TaskID, Prompt, SessionDir string
}

func codexEnvFrom(getenv func(string) string) (codexEnv, error) {
	e := codexEnv{MCPURL: getenv("PRICKLE_MCP_URL"), RunToken: getenv("PRICKLE_RUN_TOKEN"), RunID: getenv("PRICKLE_RUN_ID"),
		TaskID: getenv("PRICKLE_TASK_ID"), Prompt: getenv("PRICKLE_PROMPT"), SessionDir: getenv("PRICKLE_SESSION_DIR")}
	var missing []string
	for _, kv := range [][2]string{{"PRICKLE_MCP_URL", e.MCPURL}, {"PRICKLE_RUN_TOKEN", e.RunToken}, {"PRICKLE_RUN_ID", e.RunID},
		{"PRICKLE_TASK_ID", e.TaskID}, {"PRICKLE_PROMPT", e.Prompt}, {"PRICKLE_SESSION_DIR", e.SessionDir}} {
		if kv[1] == "" {
			missing = append(missing, kv[0])
		}
	}
	if len(missing) > 0 {
		return codexEnv{}, fmt.Errorf("%s runs under prickle-runner: %s not set", CodexRunCommand, strings.Join(missing, ", "))
	}
	return e, nil
}

// CodexMain is `prickle-runner codex-run`: it hosts `codex app-server` for
// one run of a task and answers Codex's approval requests with the owner's
// decisions (request_step). ctx ends on SIGTERM; wake gets SIGUSR1 (ask the
// owner's decision again now). It returns the process's exit status.
func CodexMain(ctx context.Context, args []string, wake <-chan os.Signal, stdout, stderr io.Writer) int {
	log := slog.New(slog.NewJSONHandler(stdout, nil))
	opt, err := ParseCodexArgs(args)
	if err != nil {
		log.Error("codex-run cannot start", "error", err.Error())
		return 2
	}
	env, err := codexEnvFrom(os.Getenv)
	if err != nil {
		log.Error("codex-run cannot start", "error", err.Error())
		return 2
	}
	dir, err := os.Getwd()
	if err != nil {
		log.Error("codex-run cannot start", "error", err.Error())
		return 2
	}
	h := newCodexHost(opt, env, dir, RunMCP(env.MCPURL, 30*time.Second), log, wake)
	h.stderr = stderr
	start := time.Now()
	err = h.run(ctx)
	log.Info(CodexUsageMsg, "task", env.TaskID, "run", env.RunID, "usage", h.usage.report(time.Since(start)))
	if err != nil {
		log.Error("codex-run ended", "task", env.TaskID, "run", env.RunID, "error", err.Error())
		return 1
	}
	return 0
}

// codexHost runs one Codex run: the task's thread, its turns, its approvals.
type codexHost struct {
	opt     CodexOptions
	env     codexEnv
	dir     string
	steps   Steps
	log     *slog.Logger
	wake    <-chan os.Signal
	stderr  io.Writer
	session codexSession
	items   *codexItems
	usage   codexUsage

	approvals chan rpcMessage
	turns     chan turnEnd

	mu       sync.Mutex
	refusals []refusal
}

func newCodexHost(opt CodexOptions, env codexEnv, dir string, steps Steps, log *slog.Logger, wake <-chan os.Signal) *codexHost {
	return &codexHost{opt: opt, env: env, dir: dir, steps: steps, log: log, wake: wake, stderr: io.Discard,
		session: codexSession{dir: env.SessionDir}, items: newCodexItems(),
		approvals: make(chan rpcMessage, 64), turns: make(chan turnEnd, 64)}
}

// turnEnd is a turn/completed notification.
type turnEnd struct {
	ID     string
	Status string
	Error  string
}

// appServerArgs: Prickle as the MCP server "prickle" with the run token from the environment.
func (h *codexHost) appServerArgs() []string {
	u, _ := json.Marshal(h.env.MCPURL) // a JSON string is a TOML basic string
	args := []string{"app-server",
		"-c", "mcp_servers." + PrickleServer + ".url=" + string(u),
		"-c", "mcp_servers." + PrickleServer + `.bearer_token_env_var="PRICKLE_RUN_TOKEN"`}
	for _, c := range h.opt.Config {
		args = append(args, "-c", c)
	}
	return args
}

func (h *codexHost) run(ctx context.Context) error {
	cmd := exec.Command(h.opt.Program, h.appServerArgs()...)
	// Codex's own lines go to the run's log file: plain text, no terminal colours.
	cmd.Dir, cmd.Env, cmd.Stderr = h.dir, append(os.Environ(), "NO_COLOR=1"), h.stderr
	// Its own process group: a signal for this run (SIGUSR1, which ends
	// Codex 0.169.0) reaches codex-run only; stop ends Codex's group.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return fmt.Errorf("codex app-server stdin: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("codex app-server stdout: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s app-server: %w", h.opt.Program, err)
	}
	rpc := newRPCConn(stdout, stdin)
	defer h.stop(cmd, stdin, rpc)
	go h.dispatch(rpc)
	work, stopWork := context.WithCancel(ctx)
	defer stopWork()
	go h.answer(work, rpc)
	return h.converse(ctx, rpc)
}

// converse opens the task's thread and runs the run's turns.
func (h *codexHost) converse(ctx context.Context, rpc *rpcConn) error {
	init := map[string]any{"clientInfo": map[string]string{"name": "prickle-runner", "version": "1"}}
	if err := rpc.Call(ctx, "initialize", init, nil); err != nil {
		return err
	}
	if err := rpc.Notify("initialized", nil); err != nil {
		return err
	}
	thread, err := h.thread(ctx, rpc)
	if err != nil {
		return err
	}
	open, err := h.session.Open()
	if err != nil {
		h.log.Warn("cannot read the call a previous run left open", "error", err.Error())
	}
	prompt := resumePrompt(h.env.Prompt, open)
	if open != nil {
		h.log.Info("the previous run left a call waiting for the owner: the prompt quotes it", "tool_name", open.ToolName, "input", clip(string(open.Input), 500), "asked_by", open.RunID)
	}
	for n := 1; ; n++ {
		end, err := h.turn(ctx, rpc, thread, prompt)
		if err != nil {
			return err
		}
		if end.Status != "completed" {
			return fmt.Errorf("turn %s %s: %s", end.ID, end.Status, end.Error)
		}
		if n == 1 && open != nil {
			if err := h.session.SetOpen(nil); err != nil {
				h.log.Warn("cannot clear the open call", "error", err.Error())
			}
		}
		rs := h.takeRefusals()
		if len(rs) == 0 {
			return nil
		}
		if n >= maxCodexTurns {
			h.log.Warn("not telling the model of the refusals: the run has had its turns", "turns", n)
			return nil
		}
		prompt = refusedPrompt(rs)
	}
}

// thread resumes the task's thread, or starts it on the task's first run.
func (h *codexHost) thread(ctx context.Context, rpc *rpcConn) (string, error) {
	var r struct {
		Thread struct {
			ID string `json:"id"`
		} `json:"thread"`
		Model string `json:"model"`
	}
	defer func() { h.usage.setModel(r.Model) }()
	settings := map[string]any{"cwd": h.dir, "approvalPolicy": codexApprovalPolicy, "sandbox": codexSandbox}
	id, err := h.session.Thread()
	if err != nil {
		return "", err
	}
	if id != "" {
		params := map[string]any{"threadId": id, "excludeTurns": true}
		for k, v := range settings {
			params[k] = v
		}
		err := rpc.Call(ctx, "thread/resume", params, &r)
		if err == nil {
			h.log.Info("codex thread resumed", "thread", id, "task", h.env.TaskID, "run", h.env.RunID)
			return id, nil
		}
		if ctx.Err() != nil {
			return "", err
		}
		h.log.Warn("cannot resume the task's Codex thread; starting a new one", "thread", id, "error", err.Error())
	}
	if err := rpc.Call(ctx, "thread/start", settings, &r); err != nil {
		return "", err
	}
	if r.Thread.ID == "" {
		return "", errors.New("thread/start: no thread id in the answer")
	}
	if err := h.session.SetThread(r.Thread.ID); err != nil {
		return "", err
	}
	h.log.Info("codex thread started", "thread", r.Thread.ID, "task", h.env.TaskID, "run", h.env.RunID)
	return r.Thread.ID, nil
}

// turn starts a turn with text and waits for its end.
func (h *codexHost) turn(ctx context.Context, rpc *rpcConn, thread, text string) (turnEnd, error) {
	var r struct {
		Turn struct {
			ID string `json:"id"`
		} `json:"turn"`
	}
	params := map[string]any{"threadId": thread, "input": []map[string]string{{"type": "text", "text": text}}}
	if err := rpc.Call(ctx, "turn/start", params, &r); err != nil {
		return turnEnd{}, err
	}
	h.usage.turn(r.Turn.ID)
	h.log.Info("turn start", "turn", r.Turn.ID, "thread", thread)
	for {
		select {
		case e := <-h.turns:
			if e.ID == r.Turn.ID {
				h.log.Info("turn end", "turn", e.ID, "status", e.Status, "error", e.Error)
				return e, nil
			}
		case <-rpc.Done():
			return turnEnd{}, fmt.Errorf("codex app-server ended during turn %s: %v", r.Turn.ID, rpc.Err())
		case <-ctx.Done():
			return turnEnd{}, fmt.Errorf("stopped during turn %s: %w", r.Turn.ID, ctx.Err())
		}
	}
}

// dispatch sorts what Codex sends: approval requests to answer, the items
// they are about, the end of turns; any other request is refused.
func (h *codexHost) dispatch(rpc *rpcConn) {
	defer close(h.approvals)
	for m := range rpc.Incoming() {
		switch {
		case m.isRequest() && (m.Method == codexCommandApproval || m.Method == codexFileApproval || m.Method == codexElicitation):
			h.approvals <- m
		case m.isRequest():
			h.log.Warn("codex asked something the runner does not answer", "method", m.Method)
			_ = rpc.ReplyError(m.ID, rpcMethodNotFound, "prickle-runner does not answer "+m.Method)
		case m.Method == "item/started" || m.Method == "item/completed":
			var p struct {
				Item codexItem `json:"item"`
			}
			if json.Unmarshal(m.Params, &p) != nil || p.Item.ID == "" {
				continue
			}
			if m.Method == "item/started" {
				h.items.Started(p.Item)
			} else {
				h.items.Completed(p.Item.ID)
			}
		case m.Method == "turn/completed":
			var p struct {
				Turn struct {
					ID     string `json:"id"`
					Status string `json:"status"`
					Error  *struct {
						Message string `json:"message"`
					} `json:"error"`
				} `json:"turn"`
			}
			if json.Unmarshal(m.Params, &p) != nil {
				continue
			}
			e := turnEnd{ID: p.Turn.ID, Status: p.Turn.Status}
			if p.Turn.Error != nil {
				e.Error = p.Turn.Error.Message
			}
			select {
			case h.turns <- e:
			default:
				h.log.Warn("a turn end was not waited for", "turn", e.ID)
			}
		case m.Method == "thread/tokenUsage/updated":
			h.usage.update(m.Params)
		case m.Method == "error":
			h.log.Warn("codex reported an error", "params", clip(string(m.Params), 1000))
		}
	}
}

// answer handles approval requests one at a time (one step waits at a time
// per task: asking two at once would withdraw the first).
func (h *codexHost) answer(ctx context.Context, rpc *rpcConn) {
	for m := range h.approvals {
		if ctx.Err() == nil { // once stopping, requests are left open (and drained)
			h.approve(ctx, rpc, m)
		}
	}
}

// approve asks the owner about one approval request and answers Codex.
func (h *codexHost) approve(ctx context.Context, rpc *rpcConn, m rpcMessage) {
	a, err := mapApproval(m.Method, m.Params, h.items)
	if err != nil {
		h.log.Warn("a malformed approval request is refused", "method", m.Method, "error", err.Error())
		_ = rpc.ReplyError(m.ID, -32602, err.Error())
		return
	}
	reply := func(allow bool) bool {
		if err := rpc.Reply(m.ID, a.Reply(allow)); err != nil {
			h.log.Warn("cannot answer codex", "error", err.Error())
			return false
		}
		return true
	}
	switch {
	case a.Own:
		h.log.Info("approval accepted: a tool of Prickle's own", "tool_name", a.Ask.ToolName)
		reply(true)
		return
	case a.Unsupported != "":
		h.log.Warn("approval declined without asking", "method", m.Method, "why", a.Unsupported)
		reply(false)
		return
	}
	if a.Ask.ToolUseID == "" {
		a.Ask.ToolUseID = "codex-request-" + strings.Trim(string(m.ID), `"`)
	}
	asked := time.Now()
	h.log.Info("approval asked", "tool_name", a.Ask.ToolName, "does", step.Summary(a.Ask.ToolName, a.Ask.Input),
		"input", clip(string(a.Ask.Input), 1000), "tool_use_id", a.Ask.ToolUseID, "reason", a.Ask.Reason, "pid", os.Getpid())
	if err := h.session.SetOpen(&openCall{ToolName: a.Ask.ToolName, Input: a.Ask.Input, RunID: h.env.RunID, AskedAt: asked.UTC()}); err != nil {
		h.log.Warn("cannot record the open call", "error", err.Error())
	}
	ans, err := h.decision(ctx, a.Ask)
	if err != nil {
		h.log.Info("approval left open: the run is stopping", "tool_name", a.Ask.ToolName, "tool_use_id", a.Ask.ToolUseID, "error", err.Error())
		return
	}
	// Codex cannot run another call than the one it asked: an approval of
	// the owner's edit is declined here, and the model is told to make the
	// edited call, which is then allowed once (the same step).
	var editedTo json.RawMessage
	if ans.Status == "approved" || ans.Behavior == "allow" {
		if edited(a.Ask.ToolName, a.Ask.Input, ans.UpdatedInput) {
			editedTo = ans.UpdatedInput
		}
	}
	allow := ans.Behavior == "allow" && editedTo == nil
	if !reply(allow) {
		return // Codex is gone: the call stays recorded for the next run
	}
	if err := h.session.SetOpen(nil); err != nil {
		h.log.Warn("cannot clear the open call", "error", err.Error())
	}
	decision := "accept"
	if !allow {
		decision = "decline"
		h.mu.Lock()
		h.refusals = append(h.refusals, refusal{Ask: a.Ask, Message: ans.Message, Edited: editedTo})
		h.mu.Unlock()
	}
	if editedTo != nil {
		decision = "decline: the owner edited the call"
	}
	h.log.Info("approval answered", "tool_name", a.Ask.ToolName, "tool_use_id", a.Ask.ToolUseID, "decision", decision,
		"step", ans.StepID, "status", ans.Status, "message", ans.Message, "waited", time.Since(asked).Round(time.Millisecond).String())
}

// decision asks request_step until the owner has decided: a pending step
// keeps the call waiting (asked again after Poll, doubling to PollMax, and
// at once on SIGUSR1). It fails only when ctx ends. It looks first, asking
// without tool_use_id (an approved step is then answered "approved", left
// for the permission layer, and nothing is used): an approval of the call as
// asked is then taken with tool_use_id, which uses it once; an approval of
// the owner's edit is left for the edited call the model is told to make.
func (h *codexHost) decision(ctx context.Context, ask StepAsk) (StepAnswer, error) {
	look := ask
	look.ToolUseID = ""
	wait := h.opt.Poll
	for first := true; ; first = false {
		ans, err := h.requestStep(ctx, look)
		if err == nil && ans.Status == "approved" && !edited(ask.ToolName, ask.Input, ans.UpdatedInput) {
			ans, err = h.requestStep(ctx, ask)
		}
		switch {
		case err == nil && ans.Status != "pending":
			return ans, nil
		case errors.Is(err, ErrRefused):
			return StepAnswer{Status: "refused", Behavior: "deny", Message: err.Error()}, nil
		case ctx.Err() != nil:
			return StepAnswer{}, ctx.Err()
		case err != nil:
			h.log.Warn("request_step failed; asking again", "error", err.Error(), "in", wait.String())
		case first:
			h.log.Info("waiting for the owner", "step", ans.StepID, "tool_use_id", ask.ToolUseID, "pid", os.Getpid())
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return StepAnswer{}, ctx.Err()
		case <-h.wake:
			h.log.Info("woken: asking for the owner's decision now", "tool_use_id", ask.ToolUseID)
		case <-t.C:
		}
		t.Stop()
		wait = min(2*wait, h.opt.PollMax)
	}
}

// requestStep is one request_step call of the run, within a minute.
func (h *codexHost) requestStep(ctx context.Context, ask StepAsk) (StepAnswer, error) {
	call, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return h.steps.RequestStep(call, h.env.RunToken, ask)
}

func (h *codexHost) takeRefusals() []refusal {
	h.mu.Lock()
	defer h.mu.Unlock()
	rs := h.refusals
	h.refusals = nil
	return rs
}

// stop ends Codex: its input closes (it exits), then its process group
// gets SIGTERM, then SIGKILL.
func (h *codexHost) stop(cmd *exec.Cmd, stdin io.Closer, rpc *rpcConn) {
	_ = stdin.Close()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		if waitClosed(rpc.Done(), codexStopWait) {
			break
		}
		_ = syscall.Kill(-cmd.Process.Pid, sig)
	}
	_ = cmd.Wait()
}

// waitClosed says whether ch closed within d.
func waitClosed(ch <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}
