package endpoint

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/useprickle/prickle/shared/auth/identity"
)

// TestKeptServersRunNoTool: the servers the edge keeps list the tools but
// run none; a tools/call that reached one, with no caller, is a JSON-RPC
// error, never a tool result.
func TestKeptServersRunNoTool(t *testing.T) {
	_, kept, err := newServers(slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{identity.KindAgent, identity.KindRun} {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_task","arguments":{"task_id":"tsk_1"}}}`
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		w := httptest.NewRecorder()
		kept.of(identity.Caller{Kind: kind}).ServeHTTP(w, req)
		var resp struct {
			Error  *struct{ Code int } `json:"error"`
			Result json.RawMessage     `json:"result"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil || resp.Error == nil || resp.Result != nil {
			t.Errorf("%s: HTTP %d %s, want a JSON-RPC error", kind, w.Code, w.Body.String())
		}
		if bytes.Contains(w.Body.Bytes(), []byte(`"isError":true`)) {
			t.Errorf("%s: a tool ran without the edge: %s", kind, w.Body.String())
		}
	}
}
