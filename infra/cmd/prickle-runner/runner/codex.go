package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// The Codex host: codex app-server as a child process, the task's thread and
// its turns, and what Codex sends sorted (codexdecision.go answers the
// approvals).

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
				if p.Item.Type == "commandExecution" {
					go h.claimCommandChanges(context.Background())
				}
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
