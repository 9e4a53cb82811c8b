package endpoint_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/mcp/catalog"
	"github.com/useprickle/prickle/shared/mcp/endpoint"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/teamtest"
)

// tokens is a token directory in memory: secret → token.
type tokens map[string]identity.Token

func (m tokens) TokenByHash(_ context.Context, hash string) (identity.Token, error) {
	for secret, t := range m {
		if identity.Hash(secret) == hash {
			return t, nil
		}
	}
	return identity.Token{}, identity.ErrUnknownToken
}

const (
	agentSecret   = "prk_a_writer"
	runSecret     = "prk_r_writer"
	allowedOrigin = "https://app.example.com"
)

// permissionStack is the in-process endpoint (front and one endpoint per
// tool) over the in-memory store, with alice/writer's accepted task, her
// agent token and a run token for that task.
func permissionStack(t testing.TB) http.Handler {
	t.Helper()
	st := teamtest.New()
	st.AddProject(team.Project{Slug: "website-v2", Name: "Website v2", StepDeadline: time.Hour})
	st.AddAgent(team.Agent{ID: "alice/writer", Owner: "alice", Projects: []string{"website-v2"}})
	st.AddAgent(team.Agent{ID: "bob/reviewer", Owner: "bob", Projects: []string{"website-v2"}})
	svc := team.New(st)
	ctx := context.Background()
	bob := identity.Caller{Agent: "bob/reviewer", Owner: "bob", Kind: identity.KindAgent}
	alice := identity.Caller{Agent: "alice/writer", Owner: "alice", Kind: identity.KindAgent}
	out, err := svc.HandOffTask(ctx, bob, team.HandOffInput{Project: "website-v2", Assignee: alice.Agent, Packet: task.Packet{
		Task: "Publish the hero copy.", DeliverableType: "answer", AcceptanceCriteria: []string{"it is published"},
	}})
	if err != nil {
		t.Fatalf("hand_off_task: %v", err)
	}
	if _, err := svc.AcceptTask(ctx, alice, team.AcceptInput{TaskID: out.Task.ID}); err != nil {
		t.Fatalf("accept_task: %v", err)
	}
	if out.Task.State == task.Completed {
		t.Fatal("fixture task completed")
	}
	h, err := endpoint.InProcess(endpoint.Config{
		Service: svc,
		Tokens: tokens{
			agentSecret: {Kind: identity.KindAgent, Agent: alice.Agent},
			runSecret:   {Kind: identity.KindRun, Agent: alice.Agent, TaskID: out.Task.ID, RunID: "run_1"},
		},
		Log:            slog.New(slog.NewTextHandler(io.Discard, nil)),
		AllowedOrigins: []string{allowedOrigin},
	})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// era sends one JSON-RPC request the way a client of that protocol era does.
type era struct {
	name    string
	version string
	modern  bool // 2026-07-28: _meta in params, Mcp-Method / Mcp-Name headers
}

var eras = []era{{"2025-11-25", "2025-11-25", false}, {"2026-07-28", "2026-07-28", true}}

func (e era) call(t *testing.T, h http.Handler, secret, method, name string, params map[string]any) map[string]any {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, e.request(t, secret, method, name, params))
	var resp struct {
		Result map[string]any `json:"result"`
		Error  any            `json:"error"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil || resp.Result == nil {
		t.Fatalf("%s %s: HTTP %d %s", e.name, method, w.Code, w.Body.String())
	}
	return resp.Result
}

// request is one JSON-RPC request as a client of that era sends it.
func (e era) request(t *testing.T, secret, method, name string, params map[string]any) *http.Request {
	t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	if e.modern {
		params["_meta"] = map[string]any{
			"io.modelcontextprotocol/protocolVersion":    e.version,
			"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "test", "version": "0"},
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		}
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+secret)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", e.version)
	if e.modern {
		req.Header.Set("Mcp-Method", method)
		if name != "" {
			req.Header.Set("Mcp-Name", name)
		}
	}
	return req
}

// TestRequestStepListedPerTokenKind: an agent token sees request_step's
// seed output schema byte for byte; a run token sees request_step without
// an outputSchema and every other tool unchanged.
func TestRequestStepListedPerTokenKind(t *testing.T) {
	h := permissionStack(t)
	seed, _ := catalog.Lookup("request_step")
	for _, e := range eras {
		for _, tc := range []struct {
			secret     string
			wantOutput bool
		}{{agentSecret, true}, {runSecret, false}} {
			res := e.call(t, h, tc.secret, "tools/list", "", nil)
			list, _ := res["tools"].([]any)
			if len(list) != len(catalog.All()) {
				t.Fatalf("%s %s: %d tools, want %d", e.name, tc.secret, len(list), len(catalog.All()))
			}
			for _, item := range list {
				tool := item.(map[string]any)
				out, has := tool["outputSchema"]
				if tool["name"] != "request_step" {
					if !has {
						t.Errorf("%s %s: %s lost its outputSchema", e.name, tc.secret, tool["name"])
					}
					continue
				}
				if has != tc.wantOutput {
					t.Errorf("%s %s: request_step has outputSchema %v, want %v", e.name, tc.secret, has, tc.wantOutput)
				}
				if has {
					got, _ := json.Marshal(out)
					var want any
					_ = json.Unmarshal(seed.Output, &want)
					wantJSON, _ := json.Marshal(want)
					if !bytes.Equal(got, wantJSON) {
						t.Errorf("%s: request_step's outputSchema is not the seed's", e.name)
					}
				}
				if _, ok := tool["inputSchema"]; !ok {
					t.Errorf("%s %s: request_step has no inputSchema", e.name, tc.secret)
				}
			}
		}
	}
}

// TestRequestStepAnswersRunAsOneTextBlock: with a run token request_step's
// result is exactly one text block holding the JSON of the seed's output,
// with no structuredContent, in both eras (2026-07-28 reaches the tool's own
// endpoint by Mcp-Name); other tools keep structuredContent for run tokens,
// and an agent token's refusal stays an isError text result.
func TestRequestStepAnswersRunAsOneTextBlock(t *testing.T) {
	h := permissionStack(t)
	seed, _ := catalog.Lookup("request_step")
	for _, e := range eras {
		args := map[string]any{"tool_name": "Bash", "input": map[string]any{"command": "echo " + e.name}, "tool_use_id": "toolu_" + strings.ReplaceAll(e.name, "-", "")}
		res := e.call(t, h, runSecret, "tools/call", "request_step", map[string]any{"name": "request_step", "arguments": args})
		if _, has := res["structuredContent"]; has {
			t.Errorf("%s: run token's request_step result carries structuredContent: %v", e.name, res)
		}
		content, _ := res["content"].([]any)
		if len(content) != 1 {
			t.Fatalf("%s: %d content blocks, want 1: %v", e.name, len(content), res)
		}
		block := content[0].(map[string]any)
		text, _ := block["text"].(string)
		if block["type"] != "text" || text == "" {
			t.Fatalf("%s: content block is not text: %v", e.name, block)
		}
		if err := seed.ValidateOutput([]byte(text)); err != nil {
			t.Errorf("%s: text is not seed output: %v: %s", e.name, err, text)
		}
		var answer struct {
			Behavior, Message, Status string
		}
		if err := json.Unmarshal([]byte(text), &answer); err != nil || answer.Behavior != "deny" || answer.Status != "pending" || !strings.Contains(answer.Message, "still waiting") {
			t.Errorf("%s: answer %s, want a pending deny saying still waiting", e.name, text)
		}

		room := e.call(t, h, runSecret, "tools/call", "read_room", map[string]any{"name": "read_room", "arguments": map[string]any{"project": "website-v2"}})
		if _, has := room["structuredContent"]; !has {
			t.Errorf("%s: read_room with a run token lost structuredContent", e.name)
		}

		refused := e.call(t, h, agentSecret, "tools/call", "request_step", map[string]any{"name": "request_step", "arguments": args})
		if refused["isError"] != true {
			t.Errorf("%s: agent token's request_step not refused: %v", e.name, refused)
		}
	}
}

// TestUpdatePulseRefusesSpoofedNamesAsToolErrors: through MCP, a pulse
// file holding a right-to-left override, NUL or a line break is an isError
// result naming the field and the character (not a protocol error), and a
// plain name is stored.
func TestUpdatePulseRefusesSpoofedNamesAsToolErrors(t *testing.T) {
	h := permissionStack(t)
	for _, e := range eras {
		for file, says := range map[string]string{"src/\u202egnp.exe": "files[0] holds U+202E", "a\x00b.ts": "files[0] holds U+0000", "a.ts\nb.ts": "files[0] holds U+000A"} {
			res := e.call(t, h, agentSecret, "tools/call", "update_pulse", map[string]any{"name": "update_pulse",
				"arguments": map[string]any{"project": "website-v2", "doing": "Spoofing", "files": []string{file}}})
			content, _ := res["content"].([]any)
			text := ""
			if len(content) == 1 {
				text, _ = content[0].(map[string]any)["text"].(string)
			}
			if res["isError"] != true || !strings.Contains(text, says) || !strings.Contains(text, "nothing was stored") {
				t.Errorf("%s: update_pulse with %q = %v; want isError saying %q", e.name, file, res, says)
			}
		}
		ok := e.call(t, h, agentSecret, "tools/call", "update_pulse", map[string]any{"name": "update_pulse",
			"arguments": map[string]any{"project": "website-v2", "doing": "Editing", "files": []string{"src/ملف.ts"}}})
		if ok["isError"] == true {
			t.Errorf("%s: a plain name refused: %v", e.name, ok)
		}
	}
}
