package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// A test binary run with gateHelperEnv set is `prickle-runner hook --cli
// <name>` (with --after, the post-tool hook): the gate's real process, as
// the CLIs run it.
const gateHelperEnv = "PRICKLE_TEST_GATE_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(gateHelperEnv) == "1" {
		if cli := AgentHookCLI(os.Args[1:]); cli != "" && AgentHookAfter(os.Args[1:]) {
			os.Exit(AgentAfterHook(context.Background(), cli, os.Stdin, os.Stdout, os.Getenv))
		}
		if cli := AgentHookCLI(os.Args[1:]); cli != "" {
			os.Exit(AgentHook(context.Background(), cli, os.Stdin, os.Stdout, os.Getenv))
		}
		os.Exit(3)
	}
	os.Exit(m.Run())
}

// scriptedSteps answers request_step from a script: the answer to a look
// (no tool_use_id) and to a take (with one).
type scriptedSteps struct {
	mu    sync.Mutex
	look  []StepAnswer // successive answers to looks; the last repeats
	take  StepAnswer
	err   error
	asked []StepAsk
}

func (s *scriptedSteps) RequestStep(_ context.Context, _ string, a StepAsk) (StepAnswer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked = append(s.asked, a)
	if s.err != nil {
		return StepAnswer{}, s.err
	}
	if a.ToolUseID != "" {
		return s.take, nil
	}
	ans := s.look[0]
	if len(s.look) > 1 {
		s.look = s.look[1:]
	}
	return ans, nil
}

// The hook input each CLI gives for the same shell call.
var gateInputs = map[string]string{
	TemplateQwen: `{"session_id":"s1","transcript_path":"/x.jsonl","cwd":"/w","hook_event_name":"PreToolUse","permission_mode":"yolo",
		"tool_name":"run_shell_command","tool_input":{"command":"echo hi > out.txt","description":"write out.txt (turn 4)"},
		"tool_use_id":"toolu_1796645937178_br9d3vj17","tool_call_id":"call_4_6792"}`,
	TemplateGemini: `{"session_id":"s1","cwd":"/w","hook_event_name":"BeforeTool","tool_name":"run_shell_command",
		"tool_input":{"command":"echo hi > out.txt","description":"write out.txt (turn 1)"}}`,
	TemplateCopilot: `{"sessionId":"s1","timestamp":1796646200100,"cwd":"/w","toolName":"bash",
		"toolArgs":{"command":"echo hi > out.txt","description":"write out.txt (turn 1)"}}`,
	// What the opencode plugin passes on (input.tool, sessionID, callID and output.args).
	TemplateOpencode: `{"tool":"bash","sessionID":"ses_daf8c1a2","callID":"call_2_9769",
		"args":{"command":"echo hi > out.txt","description":"write out.txt (turn 2)"}}`,
}

var gateTools = map[string]string{TemplateQwen: "run_shell_command", TemplateGemini: "run_shell_command", TemplateCopilot: "bash", TemplateOpencode: "bash"}

// decoded is a CLI's answer read back the way the CLI reads it.
type decoded struct {
	allow  bool
	reason string
	input  string // the edited input the CLI runs ("" for none)
	note   string // what the CLI tells the model beside the call's result
}

func decode(t *testing.T, cli string, b []byte) decoded {
	t.Helper()
	if bytes.Count(bytes.TrimSpace(b), []byte("\n")) != 0 || !json.Valid(b) {
		t.Fatalf("%s: the answer is not one JSON line: %q", cli, b)
	}
	var d decoded
	switch cli {
	case TemplateQwen:
		var o hookOutput
		_ = json.Unmarshal(b, &o)
		if o.HookSpecificOutput.HookEventName != "PreToolUse" || len(o.HookSpecificOutput.UpdatedInput) != 0 {
			t.Fatalf("qwen answer %s", b)
		}
		d = decoded{allow: o.HookSpecificOutput.Decision == "allow", reason: o.HookSpecificOutput.Reason}
		if !d.allow && o.HookSpecificOutput.Decision != "deny" {
			t.Fatalf("qwen decision %q", o.HookSpecificOutput.Decision)
		}
	case TemplateGemini:
		var o struct {
			Decision string `json:"decision"`
			Reason   string `json:"reason"`
			H        *struct {
				Event   string          `json:"hookEventName"`
				Input   json.RawMessage `json:"tool_input"`
				Context string          `json:"additionalContext"`
			} `json:"hookSpecificOutput"`
		}
		_ = json.Unmarshal(b, &o)
		d = decoded{allow: o.Decision == "allow", reason: o.Reason}
		if !d.allow && o.Decision != "deny" {
			t.Fatalf("gemini decision %q", o.Decision)
		}
		if o.H != nil {
			if o.H.Event != "BeforeTool" {
				t.Fatalf("gemini answer %s", b)
			}
			d.input = rawText(o.H.Input)
			d.note = o.H.Context
		}
	case TemplateCopilot:
		var o struct {
			Decision string          `json:"permissionDecision"`
			Reason   string          `json:"permissionDecisionReason"`
			Args     json.RawMessage `json:"modifiedArgs"`
			Context  string          `json:"additionalContext"`
		}
		_ = json.Unmarshal(b, &o)
		d = decoded{allow: o.Decision == "allow", reason: o.Reason, input: rawText(o.Args), note: o.Context}
		if !d.allow && o.Decision != "deny" {
			t.Fatalf("copilot decision %q", o.Decision)
		}
	case TemplateOpencode:
		var o struct {
			Decision string          `json:"decision"`
			Reason   string          `json:"reason"`
			Args     json.RawMessage `json:"args"`
			Note     string          `json:"note"`
		}
		_ = json.Unmarshal(b, &o)
		d = decoded{allow: o.Decision == "allow", reason: o.Reason, input: rawText(o.Args), note: o.Note}
		if !d.allow && o.Decision != "deny" {
			t.Fatalf("opencode decision %q", o.Decision)
		}
		if d.input != "" && !strings.Contains(o.Note, "edited") {
			t.Fatalf("opencode: an edit without a note for the model: %s", b)
		}
	}
	return d
}

func TestGateParsesEachCLIsInput(t *testing.T) {
	for cli, in := range gateInputs {
		c, err := agentCLIs[cli].parse([]byte(in))
		if err != nil {
			t.Fatalf("%s: %v", cli, err)
		}
		if c.Tool != gateTools[cli] || !strings.Contains(string(c.Input), `"command":"echo hi > out.txt"`) || c.Skip {
			t.Errorf("%s: %+v", cli, c)
		}
		if want := map[string]string{TemplateQwen: "call_4_6792", TemplateOpencode: "call_2_9769"}[cli]; c.CallID != want {
			t.Errorf("%s: call id %q, want %q (the model's, where the CLI gives it)", cli, c.CallID, want)
		}
		for _, bad := range []string{`not json {`, `{}`, `[]`} {
			if _, err := agentCLIs[cli].parse([]byte(bad)); err == nil {
				t.Errorf("%s: %q parsed", cli, bad)
			}
		}
	}
	// Copilot versions that pass the arguments as a string.
	c, err := copilotTemplate.parse([]byte(`{"toolName":"bash","toolArgs":"{\"command\":\"ls\"}"}`))
	if err != nil || string(c.Input) != `{"command":"ls"}` {
		t.Errorf("string toolArgs: %+v %v", c, err)
	}
	if _, err := copilotTemplate.parse([]byte(`{"toolName":"bash","toolArgs":"rm -rf /"}`)); err == nil {
		t.Error("string toolArgs that are not JSON parsed")
	}
	// Another event passes.
	if c, _ := qwenTemplate.parse([]byte(`{"hook_event_name":"PostToolUse","tool_name":"x"}`)); !c.Skip {
		t.Error("qwen PostToolUse judged")
	}
}

func TestGateDecides(t *testing.T) {
	pending := StepAnswer{StepID: "stp_1", Status: "pending", Behavior: "deny", Message: "still waiting for your owner"}
	approved := StepAnswer{StepID: "stp_1", Status: "approved", Behavior: "deny", Message: "allowed, left for your permission layer",
		UpdatedInput: json.RawMessage(`{"command":"echo hi > out.txt","description":"as first asked"}`)}
	approvedEdit := approved
	approvedEdit.UpdatedInput = json.RawMessage(`{"command":"echo edited > out.txt"}`)
	allow := StepAnswer{StepID: "stp_1", Status: "consumed", Behavior: "allow", Message: "approved", UpdatedInput: approved.UpdatedInput}
	allowEdit := allow
	allowEdit.UpdatedInput = approvedEdit.UpdatedInput
	refused := StepAnswer{StepID: "stp_1", Status: "refused", Behavior: "deny", Message: "refused by your owner: Not on a Friday. Don't try it again."}

	tests := []struct {
		name    string
		steps   *scriptedSteps
		allowed []string
		token   string
		limit   time.Duration
		gone    bool                                                 // the CLI is gone: nobody reads the answer
		want    func(cli string, d decoded, s *scriptedSteps) string // "" when right
	}{
		{name: "approved: allowed, the approval taken with the call id", steps: &scriptedSteps{look: []StepAnswer{approved}, take: allow},
			want: func(cli string, d decoded, s *scriptedSteps) string {
				if !d.allow || d.input != "" || d.note != "" || len(s.asked) != 2 || s.asked[1].ToolUseID == "" || s.asked[0].ToolUseID != "" {
					return "want an allow of the call as asked, taken once"
				}
				if want := map[string]string{TemplateQwen: "call_4_6792", TemplateOpencode: "call_2_9769"}[cli]; want != "" && s.asked[1].ToolUseID != want {
					return "qwen and opencode ask with the model's call id"
				}
				return ""
			}},
		{name: "pending then approved within the hold: allowed", steps: &scriptedSteps{look: []StepAnswer{pending, approved}, take: allow}, limit: 30 * time.Second,
			want: func(_ string, d decoded, s *scriptedSteps) string {
				if !d.allow || len(s.asked) != 3 {
					return "want an allow after asking again"
				}
				return ""
			}},
		{name: "refused: the owner's message, nothing taken", steps: &scriptedSteps{look: []StepAnswer{refused}},
			want: func(_ string, d decoded, s *scriptedSteps) string {
				if d.allow || !strings.Contains(d.reason, "Not on a Friday") || len(s.asked) != 1 {
					return "want a deny with the owner's message"
				}
				return ""
			}},
		{name: "still pending at the hold's end: still waiting", steps: &scriptedSteps{look: []StepAnswer{pending}}, limit: 3 * time.Second,
			want: func(_ string, d decoded, _ *scriptedSteps) string {
				if d.allow || !strings.Contains(d.reason, "still waiting") || !strings.Contains(d.reason, "checkpoint, then end your turn") {
					return "want a still-waiting deny"
				}
				return ""
			}},
		{name: "edited", steps: &scriptedSteps{look: []StepAnswer{approvedEdit}, take: allowEdit},
			want: func(cli string, d decoded, s *scriptedSteps) string {
				if cli == TemplateQwen {
					// qwen ignores an edited input: deny, quote the edit, leave the approval for it.
					if d.allow || !strings.Contains(d.reason, `{"command":"echo edited > out.txt"}`) || !strings.Contains(d.reason, "Make exactly this call now") || len(s.asked) != 1 {
						return "qwen: want a deny quoting the edited call, the approval left for it"
					}
					return ""
				}
				if !d.allow || d.input != jsonText(json.RawMessage(`{"command":"echo edited > out.txt"}`)) || len(s.asked) != 2 {
					return "want an allow running the edited input"
				}
				if !strings.Contains(d.note, "your owner edited this call") || !strings.Contains(d.note, "echo edited > out.txt") {
					return "want the model told of the edit: " + d.note
				}
				return ""
			}},
		{name: "approved while the CLI is gone: the approval is left for the run that makes the call again", steps: &scriptedSteps{look: []StepAnswer{approved}, take: allow}, gone: true,
			want: func(_ string, d decoded, s *scriptedSteps) string {
				if d.allow || len(s.asked) != 1 || s.asked[0].ToolUseID != "" {
					return "want nothing taken"
				}
				return ""
			}},
		{name: "pending while the CLI is gone: the hold ends", steps: &scriptedSteps{look: []StepAnswer{pending, approved}, take: allow}, gone: true, limit: 30 * time.Second,
			want: func(_ string, d decoded, s *scriptedSteps) string {
				if d.allow || len(s.asked) != 1 {
					return "want one look, nothing held or taken"
				}
				return ""
			}},
		{name: "allow-listed: allowed unasked", steps: &scriptedSteps{look: []StepAnswer{pending}}, allowed: []string{"run_shell_command", "bash"},
			want: func(_ string, d decoded, s *scriptedSteps) string {
				if !d.allow || len(s.asked) != 0 {
					return "want an allow without asking"
				}
				return ""
			}},
		{name: "no run token: denied", steps: &scriptedSteps{look: []StepAnswer{allow}}, token: "-",
			want: func(_ string, d decoded, s *scriptedSteps) string {
				if d.allow || len(s.asked) != 0 {
					return "want a deny without asking"
				}
				return ""
			}},
		{name: "Prickle fails or answers badly: denied", steps: &scriptedSteps{err: errors.New("request_step: the answer is not a step: <html>")},
			want: func(_ string, d decoded, _ *scriptedSteps) string {
				if d.allow || !strings.Contains(d.reason, "could not ask your owner") {
					return "want a deny"
				}
				return ""
			}},
	}
	for _, tt := range tests {
		for cli := range gateInputs {
			t.Run(cli+"/"+tt.name, func(t *testing.T) {
				steps := scriptedSteps{look: append([]StepAnswer{}, tt.steps.look...), take: tt.steps.take, err: tt.steps.err}
				dir := t.TempDir()
				env := HookEnv{RunToken: "prk_r_tok", Allowed: tt.allowed, SessionDir: dir}
				if tt.token == "-" {
					env.RunToken = ""
				}
				limit := tt.limit
				if limit == 0 {
					limit = 20 * time.Second
				}
				var out bytes.Buffer
				alive := func() bool { return !tt.gone }
				if code := runGate(context.Background(), agentCLIs[cli], strings.NewReader(gateInputs[cli]), &out, env, &steps, "", limit, alive); code != 0 {
					t.Fatalf("exit %d", code)
				}
				if msg := tt.want(cli, decode(t, cli, out.Bytes()), &steps); msg != "" {
					t.Fatalf("%s: answer %s, asked %+v", msg, out.String(), steps.asked)
				}
				if len(steps.asked) > 0 && steps.err == nil {
					a, err := LoadAsked(dir)
					if err != nil || a == nil || a.Name != gateTools[cli] {
						t.Fatalf("asked.json %+v %v", a, err)
					}
				}
			})
		}
	}
}

// The call is kept in asked.json as soon as it is known pending, before the
// hold ends: a gate killed while it holds leaves it for the task's next run.
func TestGateKeepsTheAskedCallWhileItHolds(t *testing.T) {
	pending := StepAnswer{StepID: "stp_1", Status: "pending", Behavior: "deny", Message: "still waiting"}
	approved := StepAnswer{StepID: "stp_1", Status: "approved", Behavior: "deny"}
	steps := &scriptedSteps{look: []StepAnswer{pending, pending, approved}, take: StepAnswer{StepID: "stp_1", Status: "consumed", Behavior: "allow"}}
	var kept []StepAnswer
	ask := StepAsk{ToolName: "bash", Input: json.RawMessage(`{"command":"ls"}`), ToolUseID: "c1"}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ans, err := holdDecision(ctx, steps, "t", ask, true, holdHooks{asked: func(a StepAnswer) {
		kept = append(kept, a)
		if len(steps.asked) != 1 {
			t.Errorf("kept after %d asks, want at the first", len(steps.asked))
		}
	}})
	if err != nil || ans.Status != "consumed" {
		t.Fatalf("%+v %v", ans, err)
	}
	if len(kept) != 1 || kept[0].Status != "pending" {
		t.Fatalf("kept %+v, want the pending call once", kept)
	}
}

// The gate tells a CLI that is gone from one that reads its answer by its
// stdout pipe: without a reader, poll reports an error.
func TestGateSeesItsCLIGone(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	alive := listening(w)
	if alive == nil || !alive() {
		t.Fatal("a pipe with its reader: the CLI is there")
	}
	r.Close()
	if alive() {
		t.Fatal("a pipe without a reader: the CLI is gone")
	}
	if listening(&bytes.Buffer{}) != nil {
		t.Fatal("a buffer is no pipe to watch")
	}
}

// A gate that hangs still answers, with a deny, within its limit.
func TestGateAnswersWithinItsLimit(t *testing.T) {
	for cli := range gateInputs {
		start := time.Now()
		var out bytes.Buffer
		code := runGate(context.Background(), agentCLIs[cli], strings.NewReader(gateInputs[cli]), &out, HookEnv{RunToken: "t"}, &scriptedSteps{look: []StepAnswer{{}}}, "hang", 300*time.Millisecond, nil)
		if code != 0 || time.Since(start) > 5*time.Second {
			t.Fatalf("%s: exit %d after %s", cli, code, time.Since(start))
		}
		if d := decode(t, cli, out.Bytes()); d.allow {
			t.Fatalf("%s: a hung gate allowed: %s", cli, out.String())
		}
	}
}

// Every CLI's gate limit is below the hook timeout its settings give (qwen's
// own cap is 60 s whatever the settings say).
func TestGateLimitsAreBelowTheCLIsTimeouts(t *testing.T) {
	for cli, c := range agentCLIs {
		if c.gateLimit()+5*time.Second > c.hookTimeout() {
			t.Errorf("%s: limit %s, hook timeout %s", cli, c.gateLimit(), c.hookTimeout())
		}
	}
	if qwenTemplate.hookTimeout() >= 60*time.Second {
		t.Error("qwen runs the call after 60 s")
	}
}

// garbledMCP is a Prickle whose request_step answers with no step.
func garbledMCP(t *testing.T) string {
	s := server.NewMCPServer("prickle-test", "1")
	s.AddTool(mcp.NewTool("request_step"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(`{"behavior":"allow"`), nil
	})
	srv := httptest.NewServer(server.NewStreamableHTTPServer(s, server.WithStateLess(true)))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// The gate's process as the CLIs run it (gateCommand, through sh): a gate
// that crashes (exits 1, panics, is killed), runs out of time or is answered
// badly by Prickle denies, for every template.
func TestGateCommandFailsClosed(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	mcpURL := garbledMCP(t)
	for cli := range agentCLIs {
		for _, fault := range []string{"exit1", "panic", "kill", "garbled", "unreachable"} {
			t.Run(cli+"/"+fault, func(t *testing.T) {
				cmd := exec.Command("sh", "-c", gateCommand(self, cli))
				url := mcpURL
				if fault == "unreachable" {
					url = "http://127.0.0.1:1/mcp"
				}
				cmd.Env = append(os.Environ(), gateHelperEnv+"=1", "PRICKLE_MCP_URL="+url, "PRICKLE_RUN_TOKEN=prk_r_tok",
					"PRICKLE_SESSION_DIR="+t.TempDir())
				if fault != "garbled" && fault != "unreachable" {
					cmd.Env = append(cmd.Env, gateFaultEnv+"="+fault)
				}
				cmd.Stdin = strings.NewReader(gateInputs[cli])
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				err := cmd.Run()
				code := 0
				var exit *exec.ExitError
				if errors.As(err, &exit) {
					code = exit.ExitCode()
				} else if err != nil {
					t.Fatal(err)
				}
				switch {
				case code == 2:
					// Exit 2 denies on all three CLIs, stderr the message (qwen, gemini).
					if !strings.Contains(stderr.String(), gateFailed) {
						t.Fatalf("exit 2 without the message: %q", stderr.String())
					}
				case code == 0:
					if d := decode(t, cli, stdout.Bytes()); d.allow {
						t.Fatalf("allowed: %s", stdout.String())
					}
				default:
					t.Fatalf("exit %d (a CLI may run the call): stdout %q stderr %q", code, stdout.String(), stderr.String())
				}
				if fault == "exit1" || fault == "panic" || fault == "kill" {
					if code != 2 {
						t.Fatalf("a crashed gate exited %d", code)
					}
				}
			})
		}
	}
}

func TestGateCommandQuotesTheRunner(t *testing.T) {
	got := gateCommand("/opt/it's/prickle-runner", TemplateGemini)
	want := `'/opt/it'\''s/prickle-runner' hook --cli gemini || { echo 'prickle-runner'\''s gate failed, so the call was not made. Checkpoint and end your turn.' >&2; exit 2; }`
	if got != want {
		t.Fatalf("%s\nwant %s", got, want)
	}
	if AgentHookCLI([]string{"--cli", "qwen"}) != "qwen" || AgentHookCLI([]string{"--cli=copilot"}) != "copilot" || AgentHookCLI(nil) != "" {
		t.Fatal("AgentHookCLI")
	}
}

// rawText is b compacted the way json.Marshal writes it; "" for none.
func rawText(b json.RawMessage) string {
	if len(b) == 0 {
		return ""
	}
	return jsonText(b)
}
