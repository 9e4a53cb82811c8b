package runner

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// A run reads its project's settings at Prickle's base URL, known by its
// PRICKLE_MCP_URL; a Prickle without the endpoint (404, or API Gateway's
// 403 for a path it does not route) means no file claims, any other
// failure is an error.
func TestClaimSettingsOverHTTP(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		want   ClaimSettings
		none   bool // ErrNoClaims
		fails  bool
	}{
		{"settings", 200, `{"agent":"alice/writer","project":"website-v2","file_guard":"ask","pulse_stale_seconds":600}`,
			ClaimSettings{Agent: "alice/writer", Project: "website-v2", FileGuard: "ask", PulseStaleSeconds: 600}, false, false},
		{"no guard said: the default", 200, `{"agent":"alice/writer","project":"website-v2","pulse_stale_seconds":600}`,
			ClaimSettings{Agent: "alice/writer", Project: "website-v2", FileGuard: "deny", PulseStaleSeconds: 600}, false, false},
		{"an older Prickle", 404, `{"error":"no such endpoint"}`, ClaimSettings{}, true, false},
		{"a REST API without the route", 403, `{"message":"Missing Authentication Token"}`, ClaimSettings{}, true, false},
		{"the token ended", 401, `{"error":"unauthorized"}`, ClaimSettings{}, false, true},
		{"a failure", 500, `{"error":"try again"}`, ClaimSettings{}, false, true},
		{"an unknown guard", 200, `{"agent":"alice/writer","project":"website-v2","file_guard":"off","pulse_stale_seconds":600}`, ClaimSettings{}, false, true},
		{"no window", 200, `{"agent":"alice/writer","project":"website-v2","file_guard":"deny"}`, ClaimSettings{}, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *http.Request
			var body []byte
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got = r
				body = make([]byte, 200)
				n, _ := r.Body.Read(body)
				body = body[:n]
				w.WriteHeader(tt.status)
				_, _ = w.Write([]byte(tt.body))
			}))
			defer srv.Close()
			s, err := RunMCP(srv.URL+"/mcp", 0).ClaimSettings(context.Background(), "prk_r_tok", "website-v2")
			switch {
			case tt.none:
				if !errors.Is(err, ErrNoClaims) {
					t.Fatalf("err %v, want ErrNoClaims", err)
				}
			case tt.fails:
				if err == nil || errors.Is(err, ErrNoClaims) {
					t.Fatalf("err %v, want a failure", err)
				}
			case err != nil || s != tt.want:
				t.Fatalf("settings %+v, %v; want %+v", s, err, tt.want)
			}
			if got.Method != http.MethodPost || got.URL.Path != ProjectPath || got.Header.Get("Authorization") != "Bearer prk_r_tok" || string(body) != `{"project":"website-v2"}` {
				t.Errorf("asked %s %s (%s) with %s", got.Method, got.URL.Path, got.Header.Get("Authorization"), body)
			}
		})
	}
}

// read_room and update_pulse over MCP, with the run's token: the pulse read
// from the room, the update's fields sent only when set.
func TestPulseOverMCP(t *testing.T) {
	var mu sync.Mutex
	calls := map[string]map[string]any{}
	s := server.NewMCPServer("prickle-test", "1")
	s.AddTool(mcp.NewTool("read_room"), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		mu.Lock()
		calls["read_room"] = req.GetArguments()
		mu.Unlock()
		return mcp.NewToolResultText(`{"project":"website-v2","pulse":[{"agent_id":"bob/coder","owner":"bob","project":"website-v2","availability":"working",
			"doing":"x","task_id":"tsk_1","branch":null,"files":["src/a.ts"],"last_decision":null,"updated_at":"2026-12-03T14:02:00Z"}],"tasks":[]}`), nil
	})
	s.AddTool(mcp.NewTool("update_pulse"), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		mu.Lock()
		calls["update_pulse"] = req.GetArguments()
		mu.Unlock()
		return mcp.NewToolResultText(`{"pulse":{}}`), nil
	})
	srv := httptest.NewServer(server.NewStreamableHTTPServer(s, server.WithStateLess(true)))
	defer srv.Close()
	m := RunMCP(srv.URL+"/mcp", 0)
	m.HTTP = srv.Client()
	entries, err := m.Pulse(context.Background(), "prk_r_tok", "website-v2")
	if err != nil || len(entries) != 1 || entries[0].AgentID != "bob/coder" || entries[0].Files[0] != "src/a.ts" || *entries[0].TaskID != "tsk_1" || entries[0].UpdatedAt.Minute() != 2 {
		t.Fatalf("pulse %+v, %v", entries, err)
	}
	task := "tsk_2"
	if err := m.UpdatePulse(context.Background(), "prk_r_tok", PulseUpdate{Project: "website-v2", Availability: "working", Doing: "Editing src/b.ts",
		TaskID: &task, Files: []string{"src/b.ts"}}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if got, want := jsonText(calls["read_room"]), `{"limit":1,"project":"website-v2"}`; got != want {
		t.Errorf("read_room %s, want %s", got, want)
	}
	if got, want := jsonText(calls["update_pulse"]), `{"availability":"working","doing":"Editing src/b.ts","files":["src/b.ts"],"project":"website-v2","task_id":"tsk_2"}`; got != want {
		t.Errorf("update_pulse %s, want %s", got, want)
	}
}
