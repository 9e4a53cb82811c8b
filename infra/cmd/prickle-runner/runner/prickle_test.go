package runner

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// TestRequestStepOverMCP asks request_step of an MCP server over HTTP as a
// Codex run does: the run token as Bearer, the exact call, the answer read
// from the one text block Prickle gives a run token.
func TestRequestStepOverMCP(t *testing.T) {
	var mu sync.Mutex
	var gotArgs map[string]any
	var gotAuth string
	s := server.NewMCPServer("prickle-test", "1")
	s.AddTool(mcp.NewTool("request_step"), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		mu.Lock()
		gotArgs = req.GetArguments()
		mu.Unlock()
		switch req.GetArguments()["tool_name"] {
		case "refuse_me":
			return mcp.NewToolResultError("task tsk_1 is completed; request_step needs accepted, working or waiting"), nil
		case "garbled":
			return mcp.NewToolResultText("not a step"), nil
		}
		return mcp.NewToolResultText(`{"step_id":"stp_1","status":"pending","behavior":"deny","message":"still waiting for your owner"}`), nil
	})
	h := server.NewStreamableHTTPServer(s, server.WithStateLess(true))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		gotAuth = r.Header.Get("Authorization")
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	m := NewMCPTasks(srv.URL)

	tests := []struct {
		name    string
		ask     StepAsk
		want    StepAnswer
		args    map[string]any
		refused bool
		fails   bool
	}{
		{name: "pending", ask: StepAsk{ToolName: "exec_command", Input: json.RawMessage(`{"command":"make deploy","cwd":"/w"}`), ToolUseID: "call_1", Reason: "Ship it."},
			want: StepAnswer{StepID: "stp_1", Status: "pending", Behavior: "deny", Message: "still waiting for your owner"},
			args: map[string]any{"tool_name": "exec_command", "input": map[string]any{"command": "make deploy", "cwd": "/w"}, "tool_use_id": "call_1", "reason": "Ship it."}},
		{name: "no reason: none sent", ask: StepAsk{ToolName: "exec_command", Input: json.RawMessage(`{}`), ToolUseID: "call_2"},
			want: StepAnswer{StepID: "stp_1", Status: "pending", Behavior: "deny", Message: "still waiting for your owner"},
			args: map[string]any{"tool_name": "exec_command", "input": map[string]any{}, "tool_use_id": "call_2"}},
		{name: "a domain refusal is ErrRefused", ask: StepAsk{ToolName: "refuse_me", Input: json.RawMessage(`{}`)}, refused: true},
		{name: "an answer that is no step fails", ask: StepAsk{ToolName: "garbled", Input: json.RawMessage(`{}`)}, fails: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ans, err := m.RequestStep(context.Background(), "prk_r_tok", tt.ask)
			switch {
			case tt.refused:
				if !errors.Is(err, ErrRefused) {
					t.Fatalf("err %v, want ErrRefused", err)
				}
				return
			case tt.fails:
				if err == nil || errors.Is(err, ErrRefused) {
					t.Fatalf("err %v", err)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			if !reflect.DeepEqual(ans, tt.want) {
				t.Errorf("answer %+v, want %+v", ans, tt.want)
			}
			mu.Lock()
			defer mu.Unlock()
			if gotAuth != "Bearer prk_r_tok" {
				t.Errorf("Authorization %q", gotAuth)
			}
			if jsonText(gotArgs) != jsonText(tt.args) {
				t.Errorf("arguments %s, want %s", jsonText(gotArgs), jsonText(tt.args))
			}
		})
	}
}

// The runner's checkpoint fits save_checkpoint's published schema.
func TestMaxProgressIsTheSchemas(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "shared", "mcp", "catalog", "schemas", "save_checkpoint.input.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Properties struct {
			Progress struct {
				MaxLength int `json:"maxLength"`
			} `json:"progress"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(b, &s); err != nil || s.Properties.Progress.MaxLength != MaxProgress {
		t.Errorf("save_checkpoint's progress maxLength %d (%v), MaxProgress %d", s.Properties.Progress.MaxLength, err, MaxProgress)
	}
}
