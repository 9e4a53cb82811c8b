package endpoint_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// withID is req with its JSON-RPC id (1) replaced by the literal id.
func withID(t *testing.T, req *http.Request, id string) *http.Request {
	t.Helper()
	body, err := io.ReadAll(req.Body)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(body, []byte(`"id":1,`)) {
		t.Fatalf("request has no id 1: %s", body)
	}
	body = bytes.Replace(body, []byte(`"id":1,`), []byte(`"id":`+id+`,`), 1)
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.ContentLength = int64(len(body))
	return req
}

// TestRequestIDs: MCP requires a request id to be a string or an integer
// (JSON-RPC 2.0 allows any number but advises against fractions), so an
// object, an array, a boolean or a number with a fraction or an exponent is
// answered -32600 with id null, before any tool runs; strings and integers
// up to 2^53-1 are served and echoed as sent, in both eras.
func TestRequestIDs(t *testing.T) {
	h := permissionStack(t)
	tests := []struct {
		id    string
		valid bool
	}{
		{`1`, true},
		{`0`, true},
		{`-7`, true},
		{`9007199254740991`, true},
		{`-9007199254740991`, true},
		{`"abc"`, true},
		{`""`, true},
		{`"{}"`, true},
		{`{}`, false},
		{`{"a":1}`, false},
		{`[]`, false},
		{`[1]`, false},
		{`true`, false},
		{`false`, false},
		{`1.5`, false},
		{`1.0`, false},
		{`1e3`, false},
		{`-0.25`, false},
		{`9007199254740992`, false}, // beyond 2^53-1: mcp-go would echo it changed
		{`9223372036854775808`, false},
	}
	calls := []struct {
		method, name string
		params       func() map[string]any
	}{
		{"tools/list", "", func() map[string]any { return nil }},
		{"tools/call", "read_room", func() map[string]any {
			return map[string]any{"name": "read_room", "arguments": map[string]any{"project": "website-v2"}}
		}},
	}
	for _, e := range eras {
		for _, c := range calls {
			for _, tt := range tests {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, withID(t, e.request(t, agentSecret, c.method, c.name, c.params()), tt.id))
				var resp struct {
					ID     json.RawMessage `json:"id"`
					Result any             `json:"result"`
					Error  *struct {
						Code    int    `json:"code"`
						Message string `json:"message"`
					} `json:"error"`
				}
				if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil {
					t.Errorf("%s %s id %s: HTTP %d, not JSON-RPC: %s", e.name, c.method, tt.id, w.Code, clip(w.Body.String()))
					continue
				}
				if tt.valid {
					if resp.Result == nil || string(resp.ID) != tt.id {
						t.Errorf("%s %s id %s: HTTP %d %s, want a result with the same id", e.name, c.method, tt.id, w.Code, clip(w.Body.String()))
					}
					continue
				}
				if resp.Error == nil || resp.Error.Code != -32600 || string(resp.ID) != "null" {
					t.Errorf("%s %s id %s: HTTP %d %s, want -32600 with id null", e.name, c.method, tt.id, w.Code, clip(w.Body.String()))
					continue
				}
				if wantStatus := map[bool]int{false: http.StatusOK, true: http.StatusBadRequest}[e.modern]; w.Code != wantStatus {
					t.Errorf("%s %s id %s: HTTP %d, want %d", e.name, c.method, tt.id, w.Code, wantStatus)
				}
			}
		}
	}
}

// clip shortens a body for a failure message.
func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
