package endpoint_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestOriginChecked: a request whose Origin is not allowed ("null" included)
// gets 403 with a JSON-RPC error before its token is even looked at, for
// initialize, tools/list and tools/call in both eras; no Origin or an
// allowed one is served.
func TestOriginChecked(t *testing.T) {
	h := permissionStack(t)
	calls := []struct {
		method, name string
		params       func() map[string]any
	}{
		{"initialize", "", func() map[string]any {
			return map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "test", "version": "0"}}
		}},
		{"tools/list", "", func() map[string]any { return nil }},
		{"tools/call", "read_room", func() map[string]any {
			return map[string]any{"name": "read_room", "arguments": map[string]any{"project": "website-v2"}}
		}},
	}
	for _, e := range eras {
		for _, c := range calls {
			if c.method == "initialize" && e.modern {
				continue // 2026-07-28 has no handshake
			}
			for _, tc := range []struct {
				origin string
				want   int
			}{
				{"", http.StatusOK},
				{allowedOrigin, http.StatusOK},
				{"http://evil.example", http.StatusForbidden},
				{"https://app.example.com.evil.example", http.StatusForbidden},
				{"null", http.StatusForbidden},
			} {
				req := e.request(t, agentSecret, c.method, c.name, c.params())
				if tc.origin != "" {
					req.Header.Set("Origin", tc.origin)
				}
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != tc.want {
					t.Errorf("%s %s from %q: HTTP %d, want %d: %s", e.name, c.method, tc.origin, w.Code, tc.want, w.Body.String())
					continue
				}
				var resp struct {
					Result any `json:"result"`
					Error  *struct {
						Code int `json:"code"`
					} `json:"error"`
				}
				if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil {
					t.Errorf("%s %s from %q: body is not JSON-RPC: %s", e.name, c.method, tc.origin, w.Body.String())
					continue
				}
				if (tc.want == http.StatusOK) != (resp.Result != nil) || (tc.want == http.StatusForbidden) != (resp.Error != nil) {
					t.Errorf("%s %s from %q: answer %s", e.name, c.method, tc.origin, w.Body.String())
				}
			}
		}
	}
}

// TestForeignOriginRefusedWithoutToken: the Origin check comes before
// authentication, so a foreign page learns nothing about tokens.
func TestForeignOriginRefusedWithoutToken(t *testing.T) {
	h := permissionStack(t)
	req := eras[0].request(t, "prk_a_unknown", "tools/list", "", nil)
	req.Header.Set("Origin", "http://evil.example")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != http.StatusForbidden || w.Header().Get("WWW-Authenticate") != "" {
		t.Fatalf("HTTP %d, WWW-Authenticate %q, want 403 without a challenge", w.Code, w.Header().Get("WWW-Authenticate"))
	}
}
