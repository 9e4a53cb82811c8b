package endpoint_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/useprickle/prickle/shared/domain/task"
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

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/mcp/endpoint"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/teamtest"
)

// BenchmarkFloor is the floor under BenchmarkToolCallInMemory: a bare
// mcp-go server answering one trivial tool over the same stateless
// streamable-HTTP transport, driven by the same request as benchCall sends.
// What a Prickle tool call costs above it is Prickle's own.
//
//	go test -run '^$' -bench 'Floor|InMemory' -benchmem ./shared/mcp/endpoint/
func BenchmarkFloor(b *testing.B) {
	s := server.NewMCPServer("floor", "0", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("get_task", mcp.WithString("task_id", mcp.Required())),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("task " + req.GetString("task_id", "")), nil
		})
	h := server.NewStreamableHTTPServer(s, server.WithStateLess(true), server.WithDisableStreaming(true))
	benchCall(b, h, "any", "get_task", `{"task_id":"t1"}`, nil)
}

// BenchmarkFloorRoomAnswer is the floor under read_room's answer: the same
// bare mcp-go server answering, from memory, the exact bytes Prickle's
// read_room answers in BenchmarkToolCallInMemory (ten tasks and a pulse, as
// structuredContent and as text). mcp-go's encoding of an answer grows with
// its size, so read_room above this floor is what Prickle adds to it.
func BenchmarkFloorRoomAnswer(b *testing.B) {
	room := newBenchRoom(b)
	out, err := room.svc.ReadRoom(context.Background(), room.caller(benchWriter), team.ReadRoomInput{Project: benchProject})
	if err != nil {
		b.Fatal(err)
	}
	answer, err := json.Marshal(out)
	if err != nil {
		b.Fatal(err)
	}
	s := server.NewMCPServer("floor", "0", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("read_room", mcp.WithString("project", mcp.Required())),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(string(answer))}, StructuredContent: json.RawMessage(answer)}, nil
		})
	h := server.NewStreamableHTTPServer(s, server.WithStateLess(true), server.WithDisableStreaming(true))
	benchCall(b, h, "any", "read_room", `{"project":"website-v2"}`, nil)
}

// BenchmarkToolCallInMemory is BenchmarkToolCall over the team's in-memory
// store (teamtest) and an in-memory token table: the whole endpoint
// (bearer token, argument checks, routing by Mcp-Name, the tool, the
// answer and its output check) with no emulator round trip, so ns/op is
// Prickle's CPU per call. Compare it with BenchmarkFloor in the same run,
// and read_room with BenchmarkFloorRoomAnswer.
func BenchmarkToolCallInMemory(b *testing.B) {
	room := newBenchRoom(b)
	b.Run("get_task", func(b *testing.B) {
		benchCall(b, room.h, room.secrets[benchWriter], "get_task", fmt.Sprintf(`{"task_id":%q}`, room.working), nil)
	})
	b.Run("read_room", func(b *testing.B) {
		benchCall(b, room.h, room.secrets[benchWriter], "read_room", `{"project":"website-v2"}`, nil)
	})
	b.Run("update_pulse", func(b *testing.B) {
		benchCall(b, room.h, room.secrets[benchWriter], "update_pulse", fmt.Sprintf(`{"project":"website-v2","doing":"Drafting the hero copy.","task_id":%q,"files":["site/hero.md"]}`, room.working), nil)
	})
	b.Run("save_checkpoint", func(b *testing.B) {
		benchCall(b, room.h, room.secrets[benchWriter], "save_checkpoint", fmt.Sprintf(`{"task_id":%q,"progress":"Two drafts."}`, room.working), nil)
	})
}

const benchProject, benchWriter, benchReviewer = "website-v2", "alice/writer", "bob/reviewer"

// benchRoom is the in-memory benchmarks' project: a writer working on one
// task, ten more handed to them, and the reviewer's pulse.
type benchRoom struct {
	svc     *team.Service
	h       http.Handler
	secrets map[string]string
	working string
}

func (benchRoom) caller(agent string) identity.Caller {
	owner, _, _ := strings.Cut(agent, "/")
	return identity.Caller{Agent: agent, Owner: owner, Kind: identity.KindAgent, Projects: []string{benchProject}, ProjectsKnown: true}
}

func newBenchRoom(b *testing.B) benchRoom {
	ctx := context.Background()
	st := teamtest.New()
	st.AddProject(team.Project{Slug: benchProject, Name: "Website v2", StepDeadline: step.DefaultPendingDeadline, OwnerApprovalTypes: []string{"doc"}})
	tokens := memTokens{}
	room := benchRoom{secrets: map[string]string{}}
	for _, a := range []string{benchWriter, benchReviewer} {
		st.AddAgent(team.Agent{ID: a, Projects: []string{benchProject}})
		secret, err := identity.NewSecret(identity.KindAgent)
		if err != nil {
			b.Fatal(err)
		}
		tokens[identity.Hash(secret)] = identity.Token{Hash: identity.Hash(secret), Kind: identity.KindAgent, Agent: a, Projects: []string{benchProject}, ProjectsKnown: true}
		room.secrets[a] = secret
	}
	room.svc = team.New(st)
	h, err := endpoint.InProcess(endpoint.Config{Service: room.svc, Tokens: tokens, Log: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	room.h = h
	newTask := func(accept bool) string {
		out, err := room.svc.HandOffTask(ctx, room.caller(benchReviewer), team.HandOffInput{Project: benchProject, Assignee: benchWriter, Packet: task.Packet{
			Task: "Draft the hero headline and CTA for the new landing page.", DeliverableType: "answer",
			AcceptanceCriteria: []string{"Headline of at most 8 words.", "CTA invites visitors to try the demo."},
		}})
		if err != nil {
			b.Fatal(err)
		}
		if accept {
			if _, err := room.svc.AcceptTask(ctx, room.caller(benchWriter), team.AcceptInput{TaskID: out.Task.ID}); err != nil {
				b.Fatal(err)
			}
		}
		return out.Task.ID
	}
	room.working = newTask(true)
	if _, err := room.svc.UpdatePulse(ctx, room.caller(benchReviewer), team.UpdatePulseInput{Project: benchProject, Doing: "Reviewing."}); err != nil {
		b.Fatal(err)
	}
	for range 10 {
		newTask(false)
	}
	return room
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
// tool's schemas, the first connection) and has its answer decoded whole;
// the counted calls' answers are checked by their bytes (status, a JSON-RPC
// result, no isError), so the client's decoding of a large answer is not
// charged to the server. allocs/op are per call whatever the -benchtime.
// cpu-ns/op is the process's CPU time per call, the figure to compare on a
// machine shared with other work.
func benchCall(b *testing.B, h http.Handler, token, tool, args string, setup func(*testing.B) (string, string)) {
	b.ReportAllocs()
	send := func(token, args string) *httptest.ResponseRecorder {
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
		if body := w.Body.Bytes(); w.Code != http.StatusOK || !bytes.HasPrefix(body, []byte(`{"jsonrpc":"2.0","id":1,"result":{`)) || bytes.Contains(body, []byte(`"isError":true`)) {
			b.Fatalf("%s: HTTP %d %s", tool, w.Code, body)
		}
		return w
	}
	next := func() (string, string) {
		if setup == nil {
			return token, args
		}
		b.StopTimer()
		defer b.StartTimer()
		return setup(b)
	}
	first := send(next())
	var resp struct {
		Result *struct {
			IsError bool            `json:"isError"`
			Content json.RawMessage `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal(first.Body.Bytes(), &resp); err != nil || resp.Result == nil || resp.Result.IsError || len(resp.Result.Content) < 3 {
		b.Fatalf("%s: HTTP %d %s", tool, first.Code, first.Body.String())
	}
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
