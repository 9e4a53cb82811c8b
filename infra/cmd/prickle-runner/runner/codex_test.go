package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeSteps answers request_step from a script: one answer (or error) per ask, the last repeated.
type fakeSteps struct {
	mu      sync.Mutex
	script  []stepReply
	asked   []StepAsk
	tokens  []string
	askedAt []time.Time
}

type stepReply struct {
	ans StepAnswer
	err error
}

func (f *fakeSteps) RequestStep(_ context.Context, token string, a StepAsk) (StepAnswer, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked, f.tokens, f.askedAt = append(f.asked, a), append(f.tokens, token), append(f.askedAt, time.Now())
	r := f.script[min(len(f.asked), len(f.script))-1]
	return r.ans, r.err
}

func (f *fakeSteps) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.asked)
}

var (
	pending  = stepReply{ans: StepAnswer{StepID: "stp_1", Status: "pending", Behavior: "deny", Message: "still waiting"}}
	consumed = stepReply{ans: StepAnswer{StepID: "stp_1", Status: "consumed", Behavior: "allow", Message: "allowed"}}
	refused  = stepReply{ans: StepAnswer{StepID: "stp_1", Status: "refused", Behavior: "deny", Message: `refused by your owner: "not today"`}}
	// approved is a look's answer (no tool_use_id) at a step approved as asked: left for the permission layer.
	approved = stepReply{ans: StepAnswer{StepID: "stp_1", Status: "approved", Behavior: "deny", Message: "allowed, left for your permission layer: make exactly that call now"}}
	// approvedEdit is a look's answer at a step the owner approved as edited.
	approvedEdit = stepReply{ans: StepAnswer{StepID: "stp_1", Status: "approved", Behavior: "deny",
		UpdatedInput: json.RawMessage(`{"command":"/bin/bash -lc 'make deploy-staging'","cwd":"/w"}`),
		Message:      "allowed as your owner edited it, left for your permission layer: make this call (updatedInput) instead of the one you asked, now: …"}}
)

const commandParams = `{"itemId":"call_9","command":"/bin/bash -lc 'make deploy'","cwd":"/w","reason":"Ship it."}`

func TestCodexApprove(t *testing.T) {
	tests := []struct {
		name      string
		script    []stepReply
		method    string
		params    string
		poll      time.Duration
		wake      bool // send SIGUSR1's wake-up once the first ask is answered pending
		reply     string
		asks      int
		refusal   string
		stillOpen bool
	}{
		{name: "allowed at once: accept", script: []stepReply{consumed}, method: codexCommandApproval, params: commandParams, poll: time.Hour,
			reply: `{"decision":"accept"}`, asks: 1},
		{name: "pending: the call waits, asked again with the same step, then accepted", script: []stepReply{pending, pending, consumed},
			method: codexCommandApproval, params: commandParams, poll: 5 * time.Millisecond, reply: `{"decision":"accept"}`, asks: 3},
		{name: "approved as asked: looked at, then taken once with tool_use_id, and accepted", script: []stepReply{pending, approved, consumed},
			method: codexCommandApproval, params: commandParams, poll: 5 * time.Millisecond, reply: `{"decision":"accept"}`, asks: 3},
		{name: "approved as the owner edited it: declined, not taken, and the model told the edited command", script: []stepReply{pending, approvedEdit},
			method: codexCommandApproval, params: commandParams, poll: 5 * time.Millisecond, reply: `{"decision":"decline"}`, asks: 2, refusal: "allowed as your owner edited it"},
		{name: "the edited call, asked as the model was told: its look carries the same input, so it is taken and accepted",
			script: []stepReply{{ans: StepAnswer{StepID: "stp_1", Status: "approved", Behavior: "deny", UpdatedInput: approvedEdit.ans.UpdatedInput,
				Message: "allowed as your owner edited it, left for your permission layer: make exactly that call now"}}, consumed},
			method: codexCommandApproval, params: `{"itemId":"call_9","command":"/bin/bash -lc 'make deploy-staging'","cwd":"/w"}`, poll: time.Hour,
			reply: `{"decision":"accept"}`, asks: 2},
		{name: "pending, then SIGUSR1: asked again at once", script: []stepReply{pending, consumed}, method: codexCommandApproval, params: commandParams,
			poll: time.Hour, wake: true, reply: `{"decision":"accept"}`, asks: 2},
		{name: "refused: declined, the owner's message kept for the model", script: []stepReply{pending, refused}, method: codexCommandApproval,
			params: commandParams, poll: 5 * time.Millisecond, reply: `{"decision":"decline"}`, asks: 2, refusal: `"not today"`},
		{name: "Prickle refuses to ask (the task closed): declined with its words", script: []stepReply{{err: fmt.Errorf("request_step: %w: task is completed", ErrRefused)}},
			method: codexCommandApproval, params: commandParams, poll: time.Hour, reply: `{"decision":"decline"}`, asks: 1},
		{name: "Prickle unreachable: asked again", script: []stepReply{{err: errors.New("connection refused")}, consumed},
			method: codexCommandApproval, params: commandParams, poll: 5 * time.Millisecond, reply: `{"decision":"accept"}`, asks: 2},
		{name: "Prickle's own tool: accepted without asking", method: codexElicitation,
			params: `{"serverName":"prickle","mode":"form","message":"?","requestedSchema":{},"_meta":{"codex_approval_kind":"mcp_tool_call","tool_name":"decline_task","tool_params":{}}}`,
			reply:  `{"action":"accept","content":{}}`, asks: 0},
		{name: "another server's tool, refused: the elicitation is declined", script: []stepReply{refused}, method: codexElicitation, poll: time.Hour,
			params: `{"serverName":"github","mode":"form","message":"?","requestedSchema":{},"_meta":{"codex_approval_kind":"mcp_tool_call","tool_name":"merge","tool_params":{"pr":7}}}`,
			reply:  `{"action":"decline","content":null}`, asks: 1, refusal: "not today"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			steps := &fakeSteps{script: tt.script}
			h, wake := testCodexHost(t, steps, tt.poll)
			if tt.refusal == "" && strings.Contains(tt.name, "Prickle refuses") {
				tt.refusal = "task is completed"
			}
			c, s := newTestConn(t)
			go func() {
				if tt.wake {
					for steps.count() == 0 {
						time.Sleep(time.Millisecond)
					}
					wake <- os.Signal(nil)
				}
			}()
			done := make(chan struct{})
			go func() {
				h.approve(context.Background(), c, rpcMessage{ID: json.RawMessage(`7`), Method: tt.method, Params: json.RawMessage(tt.params)})
				close(done)
			}()
			m := s.next(t)
			<-done
			if m["id"] != 7.0 || jsonText(m["result"]) != tt.reply {
				t.Errorf("reply %v, want result %s", m, tt.reply)
			}
			if steps.count() != tt.asks {
				t.Fatalf("asked %d times, want %d", steps.count(), tt.asks)
			}
			for i, a := range steps.asked {
				first := steps.asked[0]
				if a.ToolName != first.ToolName || string(a.Input) != string(first.Input) {
					t.Errorf("ask %d %+v differs from the first %+v: it would be another step", i, a, first)
				}
				// A look has no tool_use_id, so it uses nothing; only an approval as asked is then taken with it.
				prev := tt.script[max(min(i, len(tt.script))-1, 0)].ans
				take := i > 0 && prev.Status == "approved" && (prev.UpdatedInput == nil || sameJSON(prev.UpdatedInput, a.Input))
				if (a.ToolUseID != "") != take || (take && a.ToolUseID != "call_9") {
					t.Errorf("ask %d has tool_use_id %q; want it only when taking an approval as asked", i, a.ToolUseID)
				}
				if steps.tokens[i] != "prk_r_run1" {
					t.Errorf("asked with %q, not the run's token", steps.tokens[i])
				}
			}
			if tt.wake && steps.askedAt[1].Sub(steps.askedAt[0]) > 5*time.Second {
				t.Error("SIGUSR1 did not ask again at once")
			}
			rs := h.takeRefusals()
			if strings.Contains(tt.name, "declined, not taken") && (len(rs) != 1 || string(rs[0].Edited) != string(approvedEdit.ans.UpdatedInput)) {
				t.Errorf("refusals %+v, want the owner's edit kept for the model", rs)
			}
			if (tt.refusal == "") != (len(rs) == 0) || (len(rs) > 0 && !strings.Contains(rs[0].Message, tt.refusal)) {
				t.Errorf("refusals %+v, want one with %q", rs, tt.refusal)
			}
			if open, _ := h.session.Open(); open != nil {
				t.Errorf("the answered call is still recorded as open: %+v", open)
			}
		})
	}
}

// A run stopped while its owner decides leaves the request unanswered and
// the call recorded, and the next run's prompt quotes it exactly.
func TestCodexApproveStoppedLeavesTheCallOpen(t *testing.T) {
	steps := &fakeSteps{script: []stepReply{pending}}
	h, _ := testCodexHost(t, steps, time.Hour)
	c, s := newTestConn(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		h.approve(ctx, c, rpcMessage{ID: json.RawMessage(`3`), Method: codexCommandApproval, Params: json.RawMessage(commandParams)})
		close(done)
	}()
	for steps.count() == 0 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-done
	go func() { _ = c.Notify("sentinel", nil) }()
	if m := s.next(t); m["method"] != "sentinel" {
		t.Fatalf("Codex was answered: %v", m)
	}
	open, err := h.session.Open()
	if err != nil || open == nil {
		t.Fatalf("open call %v, %v", open, err)
	}
	if open.ToolName != "exec_command" || open.RunID != "run_1" || !sameJSON(open.Input, json.RawMessage(`{"command":"/bin/bash -lc 'make deploy'","cwd":"/w"}`)) {
		t.Errorf("open call %+v", open)
	}
	p := resumePrompt("Prickle woke you for task tsk_1 (step_decided).", open)
	for _, want := range []string{"Prickle woke you for task tsk_1 (step_decided).", "tool: exec_command", `"command":"/bin/bash -lc 'make deploy'"`, "make exactly that call again", "run_1"} {
		if !strings.Contains(p, want) {
			t.Errorf("prompt lacks %q:\n%s", want, p)
		}
	}
}

func TestCodexPrompts(t *testing.T) {
	if p := resumePrompt("plain", nil); p != "plain" {
		t.Errorf("without an open call the prompt is the project's: %q", p)
	}
	p := refusedPrompt([]refusal{{Ask: StepAsk{ToolName: "exec_command", Input: json.RawMessage(`{"command":"rm -rf /"}`)}, Message: `refused by your owner: "never"`}})
	for _, want := range []string{"tool: exec_command", `{"command":"rm -rf /"}`, `refused by your owner: "never"`, "Don't try them again"} {
		if !strings.Contains(p, want) {
			t.Errorf("refusal prompt lacks %q:\n%s", want, p)
		}
	}
	if strings.Contains(p, "edited") {
		t.Errorf("a refusal prompt speaks of an edit:\n%s", p)
	}
	// An edited approval: make the edited call; a refusal beside it: don't try it again.
	p = refusedPrompt([]refusal{
		{Ask: StepAsk{ToolName: "exec_command", Input: json.RawMessage(`{"command":"/bin/bash -lc 'rm -rf build'","cwd":"/w"}`)},
			Edited: json.RawMessage(`{"command":"/bin/bash -lc 'rm -rf build/tmp'","cwd":"/w"}`), Message: "allowed as your owner edited it, …"},
		{Ask: StepAsk{ToolName: "exec_command", Input: json.RawMessage(`{"command":"rm -rf /"}`)}, Message: `refused by your owner: "never"`},
	})
	for _, want := range []string{"your owner edited these calls before allowing them", `you asked: {"command":"/bin/bash -lc 'rm -rf build'","cwd":"/w"}`,
		`your owner allowed: {"command":"/bin/bash -lc 'rm -rf build/tmp'","cwd":"/w"}`, "so run this command instead: rm -rf build/tmp\n  (Codex runs it as: /bin/bash -lc 'rm -rf build/tmp')",
		"Make each edited call now, exactly as your owner edited it", "allows it once, within 15 minutes", `refused by your owner: "never"`, "Don't try them again"} {
		if !strings.Contains(p, want) {
			t.Errorf("edit prompt lacks %q:\n%s", want, p)
		}
	}
	if strings.Index(p, "rm -rf /\"") < strings.Index(p, "Make each edited call") {
		t.Errorf("the refusal is not after the edit:\n%s", p)
	}
}

// The model writes a script; Codex asks to run it wrapped in its shell. An
// edit the owner made inside that wrapper is told as the script to write.
func TestCodexScript(t *testing.T) {
	const asked = "/bin/bash -lc 'rm -rf build'"
	for _, tc := range []struct {
		name, cmd, want string
		ok              bool
	}{
		{"quoted", "/bin/bash -lc 'rm -rf build/tmp'", "rm -rf build/tmp", true},
		{"a quote inside, as shlex writes it", `/bin/bash -lc 'echo '"'"'hi'"'"' >> side.txt'`, "echo 'hi' >> side.txt", true},
		{"escaped", `/bin/bash -lc echo\ hi`, "echo hi", true},
		{"a plain word", "/bin/bash -lc ls", "ls", true},
		{"another shell", "/bin/zsh -lc 'ls'", "", false},
		{"no wrapper", "rm -rf build/tmp", "", false},
		{"two words", "/bin/bash -lc 'ls' extra", "", false},
		{"an expansion outside quotes", "/bin/bash -lc $HOME", "", false},
		{"an expansion in double quotes", `/bin/bash -lc "echo $HOME"`, "", false},
		{"an unclosed quote", "/bin/bash -lc 'ls", "", false},
		{"empty", "/bin/bash -lc ''", "", false},
	} {
		got, ok := codexScript(asked, tc.cmd)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: codexScript(%q) = %q, %v; want %q, %v", tc.name, tc.cmd, got, ok, tc.want, tc.ok)
		}
	}
}

func TestCodexSessionKeepsTheThread(t *testing.T) {
	s := codexSession{dir: t.TempDir() + "/sessions/tsk_1"}
	if id, err := s.Thread(); id != "" || err != nil {
		t.Fatalf("a new task has thread %q, %v", id, err)
	}
	if err := s.SetThread("01a2-thread"); err != nil {
		t.Fatal(err)
	}
	if id, err := s.Thread(); id != "01a2-thread" || err != nil {
		t.Errorf("thread %q, %v", id, err)
	}
	fi, err := os.Stat(s.dir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("session dir %v mode %v, want 0700", err, fi.Mode())
	}
	if err := s.SetOpen(nil); err != nil {
		t.Errorf("clearing no open call: %v", err)
	}
}

func TestParseCodexArgs(t *testing.T) {
	o, err := ParseCodexArgs([]string{"--codex", "/opt/codex", "-c", `model="o3"`, "-c", "x=1", "--poll", "2s"})
	if err != nil || o.Program != "/opt/codex" || strings.Join(o.Config, " ") != `model="o3" x=1` || o.Poll != 2*time.Second || o.PollMax != time.Minute {
		t.Errorf("options %+v, %v", o, err)
	}
	for _, bad := range [][]string{{"stray"}, {"--poll", "0s"}, {"--poll", "2m", "--poll-max", "1m"}, {"--nope"}} {
		if _, err := ParseCodexArgs(bad); err == nil {
			t.Errorf("%q parses", bad)
		}
	}
	h := newCodexHost(o, codexEnv{MCPURL: "http://127.0.0.1:3000/mcp"}, "/w", nil, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	want := []string{"app-server", "-c", `mcp_servers.prickle.url="http://127.0.0.1:3000/mcp"`, "-c", `mcp_servers.prickle.bearer_token_env_var="PRICKLE_RUN_TOKEN"`,
		"-c", `model="o3"`, "-c", "x=1"}
	if got := h.appServerArgs(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("app-server args %q\nwant %q", got, want)
	}
}

func TestCodexEnvFrom(t *testing.T) {
	full := map[string]string{"PRICKLE_MCP_URL": "u", "PRICKLE_RUN_TOKEN": "prk_r_x", "PRICKLE_RUN_ID": "run_1", "PRICKLE_TASK_ID": "tsk_1",
		"PRICKLE_PROMPT": "p", "PRICKLE_SESSION_DIR": "/s"}
	if e, err := codexEnvFrom(func(k string) string { return full[k] }); err != nil || e.SessionDir != "/s" || e.RunToken != "prk_r_x" {
		t.Errorf("env %+v, %v", e, err)
	}
	delete(full, "PRICKLE_SESSION_DIR")
	delete(full, "PRICKLE_RUN_TOKEN")
	_, err := codexEnvFrom(func(k string) string { return full[k] })
	if err == nil || !strings.Contains(err.Error(), "PRICKLE_RUN_TOKEN, PRICKLE_SESSION_DIR") {
		t.Errorf("err %v", err)
	}
}

func testCodexHost(t *testing.T, steps Steps, poll time.Duration) (*codexHost, chan os.Signal) {
	t.Helper()
	wake := make(chan os.Signal, 1)
	env := codexEnv{RunToken: "prk_r_run1", RunID: "run_1", TaskID: "tsk_1", SessionDir: t.TempDir()}
	h := newCodexHost(CodexOptions{Poll: poll, PollMax: 2 * poll}, env, "/w", steps, slog.New(slog.NewTextHandler(io.Discard, nil)), wake)
	return h, wake
}

type brokenPipe struct{}

func (brokenPipe) Write([]byte) (int, error) { return 0, io.ErrClosedPipe }

// Codex gone when the owner's answer comes: the call stays recorded, so the
// next run quotes it (the step may be used up: the owner is then asked again).
func TestCodexApproveKeepsTheCallWhenCodexIsGone(t *testing.T) {
	h, _ := testCodexHost(t, &fakeSteps{script: []stepReply{consumed}}, time.Hour)
	c := newRPCConn(strings.NewReader(""), brokenPipe{})
	h.approve(context.Background(), c, rpcMessage{ID: json.RawMessage(`1`), Method: codexCommandApproval, Params: json.RawMessage(commandParams)})
	if open, err := h.session.Open(); err != nil || open == nil || open.ToolName != "exec_command" {
		t.Errorf("open call %+v, %v", open, err)
	}
}
