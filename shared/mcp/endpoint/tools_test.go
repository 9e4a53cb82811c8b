package endpoint_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
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

const (
	bobSecret    = "prk_a_bob"
	bobRunSecret = "prk_r_bob"
)

// toolsStack is one endpoint serving every tool itself (no front hand-off)
// over the in-memory store, with alice's and bob's agent tokens.
func toolsStack(t *testing.T, st *teamtest.Store, runTask string) http.Handler {
	t.Helper()
	h, err := endpoint.New(endpoint.Config{
		Service: team.New(st),
		Tokens: tokens{
			agentSecret:  {Kind: identity.KindAgent, Agent: "alice/writer"},
			bobSecret:    {Kind: identity.KindAgent, Agent: "bob/reviewer"},
			bobRunSecret: {Kind: identity.KindRun, Agent: "bob/reviewer", TaskID: runTask, RunID: "run_1"},
		},
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// toolResult is a tools/call's result.
type toolResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
}

// text is the result's one text block.
func (r toolResult) text(t *testing.T) string {
	t.Helper()
	if len(r.Content) != 1 || r.Content[0].Type != "text" {
		t.Fatalf("result content = %+v, want one text block", r.Content)
	}
	return r.Content[0].Text
}

// post sends one JSON-RPC request of the 2025-11-25 era with a bearer token
// and extra headers, and returns its result.
func post(t *testing.T, h http.Handler, secret string, header map[string]string, method string, params any) json.RawMessage {
	t.Helper()
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+secret)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	var resp struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil || resp.Result == nil {
		t.Fatalf("%s: HTTP %d %s", method, w.Code, w.Body.String())
	}
	return resp.Result
}

func callEdge(t *testing.T, h http.Handler, secret, tool, args string, header map[string]string) toolResult {
	t.Helper()
	var r toolResult
	if err := json.Unmarshal(post(t, h, secret, header, "tools/call", map[string]any{"name": tool, "arguments": json.RawMessage(args)}), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestToolsThroughTheEdge: the catalog's tools as the edge serves them over
// the team service: a result is structuredContent plus the same JSON as
// text, the caller is the token's agent whatever the arguments say, a
// refusal is isError with the service's message.
func TestToolsThroughTheEdge(t *testing.T) {
	st := teamtest.New()
	st.AddProject(team.Project{Slug: "website-v2", Name: "Website v2", StepDeadline: time.Hour})
	st.AddAgent(team.Agent{ID: "alice/writer", Owner: "alice", Projects: []string{"website-v2"}})
	st.AddAgent(team.Agent{ID: "bob/reviewer", Owner: "bob", Projects: []string{"website-v2"}})
	var taskID string
	h := toolsStack(t, st, "")

	t.Run("tools/list shows the catalog", func(t *testing.T) {
		var list struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(post(t, h, agentSecret, nil, "tools/list", map[string]any{}), &list); err != nil {
			t.Fatal(err)
		}
		var got, want []string
		for _, tl := range list.Tools {
			got = append(got, tl.Name)
		}
		for _, tl := range catalog.All() {
			want = append(want, tl.Name)
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("tools/list = %v, want the catalog's %v", got, want)
		}
	})

	t.Run("a result is structuredContent plus the same JSON as text", func(t *testing.T) {
		tl, _ := catalog.Lookup("hand_off_task")
		res := callEdge(t, h, agentSecret, "hand_off_task", string(tl.Example), nil)
		if res.IsError {
			t.Fatalf("hand_off_task refused: %s", res.text(t))
		}
		body := res.text(t)
		if !bytes.Equal(res.StructuredContent, []byte(body)) {
			t.Errorf("structuredContent %s differs from text %s", res.StructuredContent, body)
		}
		if err := tl.ValidateOutput(json.RawMessage(body)); err != nil {
			t.Errorf("result breaks the output schema: %v", err)
		}
		var out team.TaskOutput
		if err := json.Unmarshal([]byte(body), &out); err != nil {
			t.Fatal(err)
		}
		if out.Task.Requester != "alice/writer" || out.Task.Assignee != "bob/reviewer" || out.Task.State != task.Routed {
			t.Errorf("task = %+v, want routed from alice (the token, not an argument) to bob", out.Task)
		}
		taskID = out.Task.ID
	})

	t.Run("identity comes from the token, not the arguments", func(t *testing.T) {
		res := callEdge(t, h, bobSecret, "accept_task", `{"task_id":"`+taskID+`","note":"I am alice/writer"}`, nil)
		if res.IsError {
			t.Fatalf("bob's accept refused: %s", res.text(t))
		}
		hist, _ := st.History(t.Context(), taskID)
		if last := hist[len(hist)-1]; last.By != "bob/reviewer" {
			t.Errorf("accept recorded by %s, want bob/reviewer", last.By)
		}
	})

	t.Run("a refusal is isError with the message", func(t *testing.T) {
		res := callEdge(t, h, bobSecret, "accept_task", `{"task_id":"`+taskID+`"}`, nil)
		if !res.IsError {
			t.Fatalf("second accept succeeded: %s", res.text(t))
		}
		if got, want := res.text(t), "task "+taskID+" is accepted; accept_task needs routed"; got != want {
			t.Errorf("message = %q, want %q", got, want)
		}
		if res.StructuredContent != nil {
			t.Errorf("a refusal carries structuredContent %s", res.StructuredContent)
		}
	})

	t.Run("arguments the edge did not check are checked by the tool, as isError naming the field", func(t *testing.T) {
		// Routing headers that name another call: the edge checks nothing
		// and leaves the call to MCP, which (in this era) runs it.
		mismatch := map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": "get_task"}
		res := callEdge(t, h, bobSecret, "review_result", `{"task_id":"`+taskID+`","verdict":"maybe"}`, mismatch)
		if !res.IsError || !strings.Contains(res.text(t), "/verdict") || !strings.Contains(res.text(t), "review_result") {
			t.Errorf("result = error %v %q, want an isError naming review_result and /verdict", res.IsError, res.text(t))
		}
	})

	t.Run("request_step answers like a permission prompt", func(t *testing.T) {
		run := toolsStack(t, st, taskID)
		res := callEdge(t, run, bobRunSecret, "request_step", `{"tool_name":"Bash","input":{"command":"git push && echo <ok>"}}`, nil)
		if res.IsError {
			t.Fatalf("request_step refused: %s", res.text(t))
		}
		var out team.RequestStepOutput
		if err := json.Unmarshal([]byte(res.text(t)), &out); err != nil {
			t.Fatal(err)
		}
		if out.Status != "pending" || out.Behavior != "deny" {
			t.Errorf("answer = %+v, want pending deny", out)
		}
		res = callEdge(t, run, bobSecret, "request_step", `{"tool_name":"Bash","input":{}}`, nil)
		if !res.IsError || !strings.Contains(res.text(t), "woken run only") {
			t.Errorf("agent token: error %v %q, want an isError saying a woken run only", res.IsError, res.text(t))
		}
	})
}

func TestEndpointServesOnlyTheNamedTools(t *testing.T) {
	if _, err := endpoint.New(endpoint.Config{Service: team.New(teamtest.New()), Tools: []string{"get_task", "nope"}}); err == nil {
		t.Error("New accepted a tool the catalog does not have")
	}
	h, err := endpoint.New(endpoint.Config{
		Service: team.New(teamtest.New()),
		Tokens:  tokens{agentSecret: {Kind: identity.KindAgent, Agent: "alice/writer"}},
		Tools:   []string{"get_task"},
		Log:     slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(post(t, h, agentSecret, nil, "tools/list", map[string]any{}), &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Tools) != 1 || list.Tools[0].Name != "get_task" {
		t.Errorf("tools/list = %+v, want only get_task", list.Tools)
	}
	var res struct {
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"accept_task","arguments":{"task_id":"tsk_1"}}}`
	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+agentSecret)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if err := json.Unmarshal(w.Body.Bytes(), &res); err != nil || res.Error == nil || !strings.Contains(res.Error.Message, "not found") {
		t.Errorf("a call of a tool not served = HTTP %d %s, want a JSON-RPC error: not found", w.Code, w.Body.String())
	}
}
