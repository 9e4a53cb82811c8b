package endpoint_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/useprickle/prickle/shared/endpoint"
	"github.com/useprickle/prickle/shared/identity"
	"github.com/useprickle/prickle/shared/step"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/teamtest"
)

// BenchmarkFloor is the floor under BenchmarkToolCallInMemory: a bare
// mcp-go server answering one trivial tool over the same stateless
// streamable-HTTP transport, driven by the same request as benchCall sends.
// What a Prickle tool call costs above it is Prickle's own.
//
//	go test -run '^$' -bench 'Floor|InMemory' -benchmem ./shared/endpoint/
func BenchmarkFloor(b *testing.B) {
	s := server.NewMCPServer("floor", "0", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("get_task", mcp.WithString("task_id", mcp.Required())),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("task " + req.GetString("task_id", "")), nil
		})
	h := server.NewStreamableHTTPServer(s, server.WithStateLess(true), server.WithDisableStreaming(true))
	benchCall(b, h, "any", "get_task", `{"task_id":"t1"}`, nil)
}

// BenchmarkToolCallInMemory is BenchmarkToolCall over the team's in-memory
// store (teamtest) and an in-memory token table: the whole endpoint
// (bearer token, argument checks, routing by Mcp-Name, the tool, the
// answer and its output check) with no emulator round trip, so ns/op is
// Prickle's CPU per call. Compare it with BenchmarkFloor in the same run.
func BenchmarkToolCallInMemory(b *testing.B) {
	ctx := context.Background()
	st := teamtest.New()
	const project, writer, reviewer = "website-v2", "alice/writer", "bob/reviewer"
	st.AddProject(team.Project{Slug: project, Name: "Website v2", StepDeadline: step.DefaultPendingDeadline, OwnerApprovalTypes: []string{"doc"}})
	tokens := memTokens{}
	secrets := map[string]string{}
	for _, a := range []string{writer, reviewer} {
		st.AddAgent(team.Agent{ID: a, Projects: []string{project}})
		secret, err := identity.NewSecret(identity.KindAgent)
		if err != nil {
			b.Fatal(err)
		}
		tokens[identity.Hash(secret)] = identity.Token{Hash: identity.Hash(secret), Kind: identity.KindAgent, Agent: a, Projects: []string{project}, ProjectsKnown: true}
		secrets[a] = secret
	}
	svc := team.New(st)
	h, err := endpoint.InProcess(endpoint.Config{Service: svc, Tokens: tokens, Log: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	caller := func(agent string) identity.Caller {
		owner, _, _ := strings.Cut(agent, "/")
		return identity.Caller{Agent: agent, Owner: owner, Kind: identity.KindAgent, Projects: []string{project}, ProjectsKnown: true}
	}
	newTask := func(b *testing.B, accept bool) string {
		out, err := svc.HandOffTask(ctx, caller(reviewer), team.HandOffInput{Project: project, Assignee: writer, Packet: team.PacketInput{
			Task: "Draft the hero headline and CTA for the new landing page.", DeliverableType: "answer",
			AcceptanceCriteria: []string{"Headline of at most 8 words.", "CTA invites visitors to try the demo."},
		}})
		if err != nil {
			b.Fatal(err)
		}
		if accept {
			if _, err := svc.AcceptTask(ctx, caller(writer), team.AcceptInput{TaskID: out.Task.ID}); err != nil {
				b.Fatal(err)
			}
		}
		return out.Task.ID
	}
	working := newTask(b, true)
	if _, err := svc.UpdatePulse(ctx, caller(reviewer), team.UpdatePulseInput{Project: project, Doing: "Reviewing."}); err != nil {
		b.Fatal(err)
	}
	for range 10 {
		newTask(b, false)
	}
	b.Run("get_task", func(b *testing.B) {
		benchCall(b, h, secrets[writer], "get_task", fmt.Sprintf(`{"task_id":%q}`, working), nil)
	})
	b.Run("read_room", func(b *testing.B) {
		benchCall(b, h, secrets[writer], "read_room", `{"project":"website-v2"}`, nil)
	})
	b.Run("update_pulse", func(b *testing.B) {
		benchCall(b, h, secrets[writer], "update_pulse", fmt.Sprintf(`{"project":"website-v2","doing":"Drafting the hero copy.","task_id":%q,"files":["site/hero.md"]}`, working), nil)
	})
	b.Run("save_checkpoint", func(b *testing.B) {
		benchCall(b, h, secrets[writer], "save_checkpoint", fmt.Sprintf(`{"task_id":%q,"progress":"Two drafts."}`, working), nil)
	})
}

// memTokens is a token table in memory, by hash.
type memTokens map[string]identity.Token

func (m memTokens) TokenByHash(_ context.Context, hash string) (identity.Token, error) {
	t, ok := m[hash]
	if !ok {
		return identity.Token{}, identity.ErrUnknownToken
	}
	return t, nil
}

// benchCall runs one tools/call per iteration. With setup, each iteration
// first gets its token and arguments from it, off the clock. One call before
// the loop, not counted, pays what happens once per process (compiling the
// tool's schemas, the first connection), so allocs/op are per call whatever
// the -benchtime. cpu-ns/op is the process's CPU time per call, the figure
// to compare on a machine shared with other work.
func benchCall(b *testing.B, h http.Handler, token, tool, args string, setup func(*testing.B) (string, string)) {
	b.ReportAllocs()
	send := func(token, args string) {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args +
			`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"bench","version":"0"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", tool)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		var resp struct {
			Result *struct {
				IsError bool `json:"isError"`
			} `json:"result"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil || resp.Result == nil || resp.Result.IsError {
			b.Fatalf("%s: HTTP %d %s", tool, w.Code, w.Body.String())
		}
	}
	next := func() (string, string) {
		if setup == nil {
			return token, args
		}
		b.StopTimer()
		defer b.StartTimer()
		return setup(b)
	}
	send(next())
	before := cpuTime(b)
	for b.Loop() {
		send(next())
	}
	if setup == nil { // setup's own CPU would count too
		b.ReportMetric(float64((cpuTime(b)-before).Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

// cpuTime is the CPU time (user and system) the process has used: unlike
// ns/op it does not grow when other processes share the machine's cores.
func cpuTime(b *testing.B) time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		b.Fatal(err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
