package endpoint_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzRequest: any body, with or without the 2026-07-28 headers, through
// the whole endpoint (front, argument checks, per-tool endpoints, the team
// service over the in-memory store) with a valid agent token. Nothing
// panics and nothing answers 5xx: every answer is JSON-RPC 2.0 (a result or
// an error, under any 2xx or 4xx status), an empty 202 for a notification,
// or a 4xx HTTP error.
func FuzzRequest(f *testing.F) {
	h := permissionStack(f)
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"f","version":"0"},"io.modelcontextprotocol/clientCapabilities":{}}`
	for _, seed := range []struct {
		body         string
		method, name string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"f","version":"0"}}}`, "", ""},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, "", ""},
		{`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_room","arguments":{"project":"website-v2"}}}`, "", ""},
		{`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"hand_off_task","arguments":{"project":"website-v2","assignee":"bob/reviewer","packet":{"task":"t","deliverable_type":"answer","acceptance_criteria":["a"]}},` + meta + `}}`, "tools/call", "hand_off_task"},
		{`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"request_step","arguments":{"tool_name":"Bash","input":{"command":"ls"},"amount":{"value":-1,"unit":"USD"}},` + meta + `}}`, "tools/call", "request_step"},
		{`{"jsonrpc":"2.0","id":5,"method":"server/discover","params":{` + meta + `}}`, "server/discover", ""},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, "", ""},
		{`{"jsonrpc":"2.0","id":{},"method":"tools/list"}`, "", ""},
		{`{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}`, "", ""},
		{`[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]`, "", ""},
		{`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"get_task","arguments":{"task_id":"` + strings.Repeat("[", 50) + `"}}}`, "", ""},
		{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"update_pulse","arguments":` + strings.Repeat("[", 100) + `}}`, "", ""},
		{`{"jsonrpc":"1.0","id":8,"method":"tools/list"}`, "", ""},
		{`{"id":9`, "", ""},
		{``, "", ""},
		{`null`, "", ""},
	} {
		f.Add([]byte(seed.body), seed.method, seed.name)
	}
	f.Fuzz(func(t *testing.T, body []byte, method, name string) {
		req := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+agentSecret)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if method != "" || name != "" {
			if !validHeader(method) || !validHeader(name) {
				return // net/http would refuse to send these headers
			}
			req.Header.Set("MCP-Protocol-Version", "2026-07-28")
			req.Header.Set("Mcp-Method", method)
			req.Header.Set("Mcp-Name", name)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code >= 500 {
			t.Fatalf("HTTP %d for %q: %s", w.Code, body, w.Body.String())
		}
		out := bytes.TrimSpace(w.Body.Bytes())
		if len(out) == 0 {
			if w.Code != http.StatusAccepted && w.Code < 400 {
				t.Fatalf("HTTP %d with no body for %q", w.Code, body)
			}
			return
		}
		if !strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") {
			if w.Code < 400 {
				t.Fatalf("HTTP %d answered %q as %q for %q", w.Code, out, w.Header().Get("Content-Type"), body)
			}
			return
		}
		var answer struct {
			JSONRPC string          `json:"jsonrpc"`
			Result  json.RawMessage `json:"result"`
			Error   *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(out, &answer); err != nil {
			var batch []json.RawMessage
			if json.Unmarshal(out, &batch) == nil {
				return // a batch answer (older protocol versions)
			}
			t.Fatalf("HTTP %d: not JSON-RPC (%v): %q for %q", w.Code, err, out, body)
		}
		if answer.JSONRPC != "2.0" || (answer.Result == nil) == (answer.Error == nil) {
			t.Fatalf("HTTP %d: not one JSON-RPC 2.0 result or error: %q for %q", w.Code, out, body)
		}
		if answer.Error != nil && answer.Error.Message == "" {
			t.Fatalf("HTTP %d: an error without a message: %q for %q", w.Code, out, body)
		}
	})
}

// validHeader reports whether v can be sent as an HTTP header value.
func validHeader(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c == 0x7f {
			return false
		}
	}
	return true
}
