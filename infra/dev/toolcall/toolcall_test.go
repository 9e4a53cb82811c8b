package toolcall

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name, body, text, errMsg string
		isError, result, bad     bool
	}{
		{name: "ok", body: `{"result":{"structuredContent":{"task":{}},"content":[{"text":"{}"}]}}`, result: true, text: "{}"},
		{name: "refused", body: `{"result":{"isError":true,"content":[{"text":"task tsk_1 "},{"text":"moved"}]}}`, result: true, isError: true, text: "task tsk_1 moved"},
		{name: "rpc error", body: `{"error":{"code":-32602,"message":"bad"}}`, errMsg: "bad"},
		{name: "not json", body: `<html>`, bad: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := Parse([]byte(tt.body))
			if (err != nil) != tt.bad {
				t.Fatalf("err %v, want bad %v", err, tt.bad)
			}
			if tt.bad {
				return
			}
			if (a.Result != nil) != tt.result || (tt.result && a.Result.IsError != tt.isError) || a.Text() != tt.text {
				t.Errorf("answer %+v text %q", a, a.Text())
			}
			if tt.errMsg != "" && (a.Error == nil || a.Error.Message != tt.errMsg) {
				t.Errorf("error %+v, want %q", a.Error, tt.errMsg)
			}
		})
	}
}

func TestSetHeadersRouteTheCallToItsTool(t *testing.T) {
	req := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	SetHeaders(req, "ptk_x", "get_task")
	for k, want := range map[string]string{"Authorization": "Bearer ptk_x", "Mcp-Method": "tools/call", "Mcp-Name": "get_task", "MCP-Protocol-Version": "2026-07-28"} {
		if got := req.Header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
}
