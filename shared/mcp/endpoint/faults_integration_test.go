//go:build integration

package endpoint_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/useprickle/prickle/shared/aws/store"
	"github.com/useprickle/prickle/shared/aws/store/storetest"
	"github.com/useprickle/prickle/shared/domain/pulse"
	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/mcp/endpoint"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/mint"
)

// faultyEndpoint is an endpoint over the team's tables that talks to the
// emulator through a fault proxy of its own, with short backoffs (the same
// retryer, the same number of attempts) and a request log the test reads.
// Against a Timeout fault its attempts have a deadline of attempt
// (store.AttemptTimeout, Lambda's, when every attempt hangs; longer when
// only the first does, so the retry is not cut short by an emulator slowed
// down by other tests) instead of the emulator's 30 s. Each one has a fresh client, as a fresh Lambda instance
// does: the SDK's retry quota (500 tokens, drained by failed retries) is not
// spent by the cases before.
func faultyEndpoint(t *testing.T, wt *wireTeam, f storetest.Fault, attempt time.Duration) (http.Handler, *storetest.Proxy, *bytes.Buffer) {
	t.Helper()
	p := storetest.NewProxy(t)
	quick := p.Store(wt.fx, func(o *dynamodb.Options) {
		if f == storetest.Timeout {
			o.HTTPClient = awshttp.NewBuildableClient().WithTimeout(attempt)
		}
		o.Retryer = retry.AddWithMaxBackoffDelay(o.Retryer, 20*time.Millisecond)
	})
	var logs bytes.Buffer
	h, err := endpoint.InProcess(endpoint.Config{Service: team.New(quick), Tokens: quick, Log: slog.New(slog.NewJSONHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return h, p, &logs
}

// state is what a call could have written: the task with its history and
// steps (through the store's public reads), the project's tasks and its pulse.
type state struct {
	Task    task.Task
	History []task.Event
	Steps   []step.Step
	Tasks   []string
	Pulse   []pulse.Entry
}

func (wt *wireTeam) state(t *testing.T, id string) state {
	t.Helper()
	ctx := context.Background()
	var s state
	var err error
	if id != "" {
		if s.Task, s.History, err = wt.fx.Store.TaskWithHistory(ctx, id); err != nil {
			t.Fatal(err)
		}
		if s.Steps, err = wt.fx.Store.StepsForTask(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	page, err := wt.fx.Store.ListTasks(ctx, team.TaskQuery{Project: wireProject, Role: "any", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range page.Tasks {
		s.Tasks = append(s.Tasks, tk.ID)
	}
	if s.Pulse, err = wt.fx.Store.Pulse(ctx, wireProject); err != nil {
		t.Fatal(err)
	}
	return s
}

// faultCase is one tool: the operation that does its work (a fault there
// leaves the token lookup and its reads alone), how many of those one call
// sends, and a fresh call (token, arguments, the task it is about).
type faultCase struct {
	tool    string
	op      string
	perCall int
	call    func(t *testing.T, wt *wireTeam) (token, args, taskID string)
}

func faultCases() []faultCase {
	onTask := func(tool, who, args string, moves ...string) faultCase {
		// A move is one conditional PutItem of the task item.
		return faultCase{tool, "PutItem", 1, func(t *testing.T, wt *wireTeam) (string, string, string) {
			id := wt.newTask(t, moves...)
			return wt.tokens[who], fmt.Sprintf(args, id), id
		}}
	}
	return []faultCase{
		{"get_task", "Query", 1, func(t *testing.T, wt *wireTeam) (string, string, string) {
			id := wt.newTask(t, "accept")
			return wt.tokens[wireWriter], fmt.Sprintf(`{"task_id":%q}`, id), id
		}},
		{"read_room", "Query", 3, func(t *testing.T, wt *wireTeam) (string, string, string) {
			return wt.tokens[wireWriter], `{"project":"website-v2"}`, ""
		}},
		{"update_pulse", "TransactWriteItems", 1, func(t *testing.T, wt *wireTeam) (string, string, string) {
			id := wt.newTask(t, "accept")
			return wt.tokens[wireWriter], fmt.Sprintf(`{"project":"website-v2","doing":"Drafting under load.","task_id":%q}`, id), id
		}},
		{"hand_off_task", "PutItem", 1, func(t *testing.T, wt *wireTeam) (string, string, string) {
			return wt.tokens[wireReviewer], `{"project":"website-v2","assignee":"alice/writer","packet":{"task":"Fact-check the About page.","deliverable_type":"answer","acceptance_criteria":["Every claim has a source."]}}`, ""
		}},
		onTask("accept_task", wireWriter, `{"task_id":%q}`),
		onTask("decline_task", wireWriter, `{"task_id":%q,"reason":"Not my area."}`),
		onTask("save_checkpoint", wireWriter, `{"task_id":%q,"progress":"Two drafts."}`, "accept"),
		onTask("return_result", wireWriter, `{"task_id":%q,"summary":"Try the demo today.","evidence":[{"kind":"note","summary":"Two headlines."}],"provenance":"agent_generated"}`, "accept"),
		onTask("review_result", wireReviewer, `{"task_id":%q,"verdict":"accept"}`, "accept", "return"),
		onTask("cancel_task", wireReviewer, `{"task_id":%q,"reason":"No longer needed."}`),
		{"request_step", "TransactWriteItems", 1, func(t *testing.T, wt *wireTeam) (string, string, string) {
			id := wt.newTask(t, "accept")
			run, err := wt.adm.StartRun(context.Background(), mint.ByOperator, wireWriter, id, "")
			if err != nil {
				t.Fatal(err)
			}
			return run.RunToken, `{"tool_name":"Bash","input":{"command":"git push origin main"},"kind":"outbound","target":"origin","reason":"Publish."}`, id
		}},
	}
}

// wantOutcome is the request log's outcome for a fault DynamoDB did not recover from.
func wantOutcome(f storetest.Fault) string {
	switch f {
	case storetest.InternalServerError, storetest.Timeout:
		return "unavailable"
	}
	return "throttled"
}

// requestOutcome reads the outcome of the last "mcp request" line logged.
func requestOutcome(logs *bytes.Buffer) string {
	outcome := ""
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var l struct {
			Msg     string `json:"msg"`
			Outcome string `json:"outcome"`
		}
		if json.Unmarshal([]byte(line), &l) == nil && l.Msg == "mcp request" {
			outcome = l.Outcome
		}
	}
	return outcome
}

// TestEveryToolUnderEveryFault: through the MCP endpoint, each tool under
// each fault DynamoDB answers with. A fault that clears (one failed request)
// is retried and the call succeeds; one that persists is retried at most
// store.MaxAttempts times and answered with a tool error saying it is
// temporary and to retry, with nothing written, and the request log counts
// it as throttled or unavailable for the alarms.
func TestEveryToolUnderEveryFault(t *testing.T) {
	wt := newWireTeam(t)
	for _, c := range faultCases() {
		for _, f := range storetest.Faults {
			if f == storetest.TransactionThrottled && c.op != "TransactWriteItems" {
				continue // the tool sends no transaction
			}
			t.Run(c.tool+"/"+string(f)+"/persistent", func(t *testing.T) {
				h, proxy, logs := faultyEndpoint(t, wt, f, store.AttemptTimeout)
				token, args, id := c.call(t, wt)
				before := wt.state(t, id)
				proxy.Inject(storetest.Rule{Fault: f, Op: c.op})
				code, refused, text := callTool(t, h, token, c.tool, args)
				_, ops := proxy.Take()
				if code != http.StatusOK || !refused {
					t.Fatalf("HTTP %d, refused %v: %s; want 200 and a tool error", code, refused, text)
				}
				if !strings.Contains(text, "temporary") || !strings.Contains(text, "retry") || !strings.Contains(text, c.tool) {
					t.Errorf("answer %q does not say the tool failed for a temporary reason and to retry", text)
				}
				if n := ops[c.op]; n < store.MaxAttempts || n > store.MaxAttempts*c.perCall {
					t.Errorf("%d %s requests sent; want %d attempts of each of %d (bounded retries)", n, c.op, store.MaxAttempts, c.perCall)
				}
				if got := requestOutcome(logs); got != wantOutcome(f) {
					t.Errorf("request log outcome %q, want %q", got, wantOutcome(f))
				}
				if after := wt.state(t, id); !reflect.DeepEqual(before, after) {
					t.Errorf("a failed call wrote:\nbefore %+v\nafter  %+v", before, after)
				}
			})
			t.Run(c.tool+"/"+string(f)+"/transient", func(t *testing.T) {
				h, proxy, _ := faultyEndpoint(t, wt, f, 5*time.Second)
				token, args, id := c.call(t, wt)
				before := wt.state(t, id)
				proxy.Inject(storetest.Rule{Fault: f, Op: c.op, Times: 1})
				code, refused, text := callTool(t, h, token, c.tool, args)
				if code != http.StatusOK || refused {
					t.Fatalf("HTTP %d, refused %v: %s; want the retry to succeed", code, refused, text)
				}
				if n := proxy.Injected()[f]; n != 1 {
					t.Fatalf("%d faults injected, want 1", n)
				}
				after := wt.state(t, id)
				if c.op != "Query" && reflect.DeepEqual(before, after) {
					t.Errorf("%s succeeded after a retry but nothing changed", c.tool)
				}
				if id != "" && after.Task.Version != len(after.History) {
					t.Errorf("task version %d, history of %d lines", after.Task.Version, len(after.History))
				}
			})
		}
	}
}

// TestTokenLookupUnderFaults: when the token itself cannot be read, the
// caller is not told its token is bad (401) but that the service is busy for
// a moment: 503 with Retry-After and a JSON-RPC error saying to retry.
func TestTokenLookupUnderFaults(t *testing.T) {
	wt := newWireTeam(t)
	for _, f := range storetest.Faults {
		if f == storetest.TransactionThrottled {
			continue // the lookup is a GetItem
		}
		t.Run(string(f), func(t *testing.T) {
			h, proxy, logs := faultyEndpoint(t, wt, f, store.AttemptTimeout)
			proxy.Inject(storetest.Rule{Fault: f, Op: "GetItem"})
			req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"read_room","arguments":{"project":"website-v2"}}}`))
			req.Header.Set("Authorization", "Bearer "+wt.tokens[wireWriter])
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			var resp struct {
				Error struct {
					Message string `json:"message"`
				} `json:"error"`
			}
			_ = json.Unmarshal(rec.Body.Bytes(), &resp)
			if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" {
				t.Errorf("HTTP %d, Retry-After %q; want 503 with Retry-After", rec.Code, rec.Header().Get("Retry-After"))
			}
			if !strings.Contains(resp.Error.Message, "temporarily unavailable") || !strings.Contains(resp.Error.Message, "retry") {
				t.Errorf("error message %q does not say to retry", resp.Error.Message)
			}
			if got := requestOutcome(logs); got != wantOutcome(f) {
				t.Errorf("request log outcome %q, want %q", got, wantOutcome(f))
			}
		})
	}
	// A token that is not there is still 401, faults or not.
	if code, _, _ := callTool(t, wt.h, "pk_unknown", "read_room", `{"project":"website-v2"}`); code != http.StatusUnauthorized {
		t.Errorf("unknown token: HTTP %d, want 401", code)
	}
}

// TestACallWhoseClientHangsUpIsNoFailure: a client that goes away while its
// call waits on DynamoDB (a run stopped mid-call) leaves the request log's
// outcome cancelled and no ERROR line: the alarms and the fault run's checks
// count Prickle's failures, and this is none.
func TestACallWhoseClientHangsUpIsNoFailure(t *testing.T) {
	wt := newWireTeam(t)
	for _, c := range faultCases() {
		if c.op == "Query" {
			continue // a read: nothing left half-written either way
		}
		t.Run(c.tool, func(t *testing.T) {
			h, proxy, logs := faultyEndpoint(t, wt, storetest.Timeout, store.AttemptTimeout)
			token, args, _ := c.call(t, wt)
			proxy.Inject(storetest.Rule{Fault: storetest.Timeout, Op: c.op})
			ctx, hangUp := context.WithCancel(context.Background())
			defer hangUp()
			time.AfterFunc(300*time.Millisecond, hangUp)
			body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + c.tool + `","arguments":` + args +
				`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"hangs-up","version":"0"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
			req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/mcp", strings.NewReader(body))
			for k, v := range map[string]string{"Authorization": "Bearer " + token, "Content-Type": "application/json",
				"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": c.tool} {
				req.Header.Set(k, v)
			}
			h.ServeHTTP(httptest.NewRecorder(), req)
			if proxy.Injected()[storetest.Timeout] == 0 {
				t.Fatalf("the call never reached its %s", c.op)
			}
			if got := requestOutcome(logs); got != endpoint.OutcomeCancelled {
				t.Errorf("request log outcome %q, want %q", got, endpoint.OutcomeCancelled)
			}
			if strings.Contains(logs.String(), `"level":"ERROR"`) {
				t.Errorf("a hung-up call logged an error:\n%s", logs.String())
			}
		})
	}
}
