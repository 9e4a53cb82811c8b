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
	"sync"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/domain/event"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/mcp/endpoint"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/teamtest"
)

// published records every event the service publishes.
type published struct {
	mu     sync.Mutex
	events []event.Event
}

func (p *published) Publish(_ context.Context, events ...event.Event) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.events = append(p.events, events...)
	return nil
}

func (p *published) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.events)
}

// nested is {"a": [[…[]…]]}: an input object nesting depth levels in all.
func nested(depth int) string {
	return `{"a":` + strings.Repeat("[", depth-1) + strings.Repeat("]", depth-1) + `}`
}

// boundsStack is a woken run of alice/writer on an accepted task behind the
// endpoint; post sends request_step with the given arguments JSON in an era.
type boundsStack struct {
	st     *teamtest.Store
	pub    *published
	taskID string
	h      http.Handler
}

func newBoundsStack(t *testing.T) boundsStack {
	t.Helper()
	st := teamtest.New()
	st.AddProject(team.Project{Slug: "website-v2", Name: "Website v2", StepDeadline: time.Hour})
	st.AddAgent(team.Agent{ID: "alice/writer", Owner: "alice", Projects: []string{"website-v2"}})
	st.AddAgent(team.Agent{ID: "bob/reviewer", Owner: "bob", Projects: []string{"website-v2"}})
	svc := team.New(st)
	pub := &published{}
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
	svc.Events = pub
	h, err := endpoint.InProcess(endpoint.Config{
		Service: svc,
		Tokens:  tokens{runSecret: {Kind: identity.KindRun, Agent: alice.Agent, TaskID: out.Task.ID, RunID: "run_1"}},
		Log:     slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	return boundsStack{st: st, pub: pub, taskID: out.Task.ID, h: h}
}

func (b boundsStack) post(e era, args string) (int, []byte) {
	meta := ""
	if e.modern {
		meta = `,"_meta":{"io.modelcontextprotocol/protocolVersion":"` + e.version + `","io.modelcontextprotocol/clientInfo":{"name":"test","version":"0"},"io.modelcontextprotocol/clientCapabilities":{}}`
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"request_step","arguments":` + args + meta + `}}`
	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+runSecret)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", e.version)
	if e.modern {
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", "request_step")
	}
	w := httptest.NewRecorder()
	b.h.ServeHTTP(w, req)
	return w.Code, w.Body.Bytes()
}

// rpcError is the error of a JSON-RPC answer.
type rpcError struct {
	Error struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// TestRequestStepInputBoundsThroughTheEndpoint: a run's request_step with an
// input 1000 or 10,000 levels deep, or of 1 MB, gets JSON-RPC -32602 naming
// /input and the limit, in both eras; nothing is stored, no event is
// published and the task does not move. An input at the limits is asked.
func TestRequestStepInputBoundsThroughTheEndpoint(t *testing.T) {
	b := newBoundsStack(t)
	st, pub, ctx := b.st, b.pub, context.Background()
	post := func(e era, input string) (int, []byte) {
		return b.post(e, `{"tool_name":"Bash","input":`+input+`}`)
	}
	for _, e := range eras {
		for _, tc := range []struct {
			name, input, want string
			status            int
		}{
			{"depth 33", nested(33), "/input: input nests deeper than 32 levels", 0},
			{"depth 1000", nested(1000), "/input: input nests deeper than 32 levels", 0},
			{"depth 10000", nested(10000), "the request nests deeper than", 0},
			{"1001 elements", `{"a":[` + strings.Repeat("0,", 1000) + `0]}`, "more than 1000 keys and array elements", 0},
			{"1 MB", `{"command":"` + strings.Repeat("x", 1_000_000) + `"}`, "the limit of a step's input size is 65536 bytes", 0},
			{"over 1 MiB", `{"command":"` + strings.Repeat("x", 1<<20) + `"}`, "request body exceeds 1 MiB", http.StatusRequestEntityTooLarge},
		} {
			code, body := post(e, tc.input)
			var resp rpcError
			if err := json.Unmarshal(body, &resp); err != nil {
				t.Fatalf("%s %s: HTTP %d %.300s", e.name, tc.name, code, body)
			}
			wantCode := -32602
			if tc.status != 0 {
				wantCode = -32600
				if code != tc.status {
					t.Errorf("%s %s: HTTP %d, want %d", e.name, tc.name, code, tc.status)
				}
			}
			if resp.Error.Code != wantCode || !strings.Contains(resp.Error.Message, tc.want) {
				t.Errorf("%s %s: error %d %q, want %d naming %q", e.name, tc.name, resp.Error.Code, resp.Error.Message, wantCode, tc.want)
			}
		}
	}
	// A body that is not JSON, but shallow, is still a parse error (-32700), not a depth refusal.
	for _, e := range eras {
		for _, broken := range []string{`{"command":"x"`, `{"command":`} {
			code, body := post(e, broken)
			var resp struct {
				Error struct {
					Code int `json:"code"`
				} `json:"error"`
			}
			if err := json.Unmarshal(body, &resp); err != nil || resp.Error.Code != -32700 {
				t.Errorf("%s truncated %s: HTTP %d %.300s, want -32700", e.name, broken, code, body)
			}
		}
	}
	steps, err := st.StepsForTask(ctx, b.taskID)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := st.Task(ctx, b.taskID)
	if len(steps) != 0 || pub.count() != 0 || got.State != task.Accepted {
		t.Fatalf("refused inputs left %d steps, %d events, task %s; want none and accepted", len(steps), pub.count(), got.State)
	}

	// At every limit at once: 32 levels, 1000 keys and elements, and still asked.
	// "a" and its 31 nested arrays (30 of them elements) reach level 32; "b" and its 968 elements make 1000.
	atLimits := `{"a":` + strings.Repeat("[", 31) + strings.Repeat("]", 31) + `,"b":[` + strings.Repeat("0,", 967) + `0]}`
	code, body := post(eras[0], atLimits)
	if code != http.StatusOK || !bytes.Contains(body, []byte(`still waiting`)) {
		t.Fatalf("input at the limits: HTTP %d %.400s", code, body)
	}
	if steps, _ = st.StepsForTask(ctx, b.taskID); len(steps) != 1 {
		t.Fatalf("input at the limits: %d steps stored, want 1", len(steps))
	}
}

// TestRequestStepAmountBoundsThroughTheEndpoint: a spending step whose
// amount.value is below zero, above step.MaxAmount (1e308 was stored as
// nothing but a DynamoDB error, -32603) or finer than millionths (0.0000004
// failed the budget's debit, -32603) gets JSON-RPC -32602 naming
// /amount/value and the limit, in both eras, with nothing stored or
// published; amounts within the bounds are asked.
func TestRequestStepAmountBoundsThroughTheEndpoint(t *testing.T) {
	b := newBoundsStack(t)
	ctx := context.Background()
	args := func(value string) string {
		return `{"tool_name":"buy_credits","input":{"pack":"` + value + `"},"kind":"spending","amount":{"value":` + value + `,"unit":"USD"}}`
	}
	for _, e := range eras {
		for value, want := range map[string]string{
			"-1":             "/amount/value: is below zero",
			"1e308":          "/amount/value: is above 1000000000, the largest amount",
			"1e10":           "/amount/value: is above 1000000000, the largest amount",
			"0.0000004":      "/amount/value: has more than 6 decimal places",
			"0.000000000001": "/amount/value: has more than 6 decimal places",
		} {
			code, body := b.post(e, args(value))
			var resp rpcError
			if err := json.Unmarshal(body, &resp); err != nil {
				t.Fatalf("%s %s: HTTP %d %.300s", e.name, value, code, body)
			}
			if resp.Error.Code != -32602 || !strings.Contains(resp.Error.Message, want) {
				t.Errorf("%s amount %s: HTTP %d, error %d %q, want -32602 naming %q", e.name, value, code, resp.Error.Code, resp.Error.Message, want)
			}
		}
	}
	if steps, _ := b.st.StepsForTask(ctx, b.taskID); len(steps) != 0 || b.pub.count() != 0 {
		t.Fatalf("refused amounts left %d steps and %d events; want none", len(steps), b.pub.count())
	}
	for _, value := range []string{"0", "0.000001", "1e9"} {
		code, body := b.post(eras[0], args(value))
		if code != http.StatusOK || !bytes.Contains(body, []byte(`still waiting`)) {
			t.Errorf("amount %s: HTTP %d %.300s, want asked", value, code, body)
		}
	}
}
