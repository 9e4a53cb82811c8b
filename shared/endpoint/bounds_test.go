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

	"github.com/useprickle/prickle/shared/endpoint"
	"github.com/useprickle/prickle/shared/event"
	"github.com/useprickle/prickle/shared/identity"
	"github.com/useprickle/prickle/shared/task"
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

// TestRequestStepInputBoundsThroughTheEndpoint: a run's request_step with an
// input 1000 or 10,000 levels deep, or of 1 MB, gets JSON-RPC -32602 naming
// /input and the limit, in both eras; nothing is stored, no event is
// published and the task does not move. An input at the limits is asked.
func TestRequestStepInputBoundsThroughTheEndpoint(t *testing.T) {
	st := teamtest.New()
	st.AddProject(team.Project{Slug: "website-v2", Name: "Website v2", StepDeadline: time.Hour})
	st.AddAgent(team.Agent{ID: "alice/writer", Owner: "alice", Projects: []string{"website-v2"}})
	st.AddAgent(team.Agent{ID: "bob/reviewer", Owner: "bob", Projects: []string{"website-v2"}})
	svc := team.New(st)
	pub := &published{}
	ctx := context.Background()
	bob := identity.Caller{Agent: "bob/reviewer", Owner: "bob", Kind: identity.KindAgent}
	alice := identity.Caller{Agent: "alice/writer", Owner: "alice", Kind: identity.KindAgent}
	out, err := svc.HandOffTask(ctx, bob, team.HandOffInput{Project: "website-v2", Assignee: alice.Agent, Packet: team.PacketInput{
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
	post := func(e era, input string) (int, []byte) {
		meta := ""
		if e.modern {
			meta = `,"_meta":{"io.modelcontextprotocol/protocolVersion":"` + e.version + `","io.modelcontextprotocol/clientInfo":{"name":"test","version":"0"},"io.modelcontextprotocol/clientCapabilities":{}}`
		}
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"request_step","arguments":{"tool_name":"Bash","input":` + input + `}` + meta + `}}`
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
		h.ServeHTTP(w, req)
		return w.Code, w.Body.Bytes()
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
			var resp struct {
				Error struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
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
	steps, err := st.StepsForTask(ctx, out.Task.ID)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := st.Task(ctx, out.Task.ID)
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
	if steps, _ = st.StepsForTask(ctx, out.Task.ID); len(steps) != 1 {
		t.Fatalf("input at the limits: %d steps stored, want 1", len(steps))
	}
}
