package wakeup

import (
	"net/http/httptest"
	"strings"
	"testing"
)

func TestReadPost(t *testing.T) {
	tests := []struct {
		name, method, body string
		ok                 bool
		code               int
		answer, allow      string
	}{
		{"posted", "POST", `{"task_id":"t1"}`, true, 200, "", ""},
		{"at the bound", "POST", strings.Repeat("x", 32), true, 200, "", ""},
		{"over the bound", "POST", strings.Repeat("x", 33), false, 413, "body too large or unreadable\n", ""},
		{"GET", "GET", "", false, 405, "only POST\n", "POST"},
		{"PUT", "PUT", "{}", false, 405, "only POST\n", "POST"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			body, ok := ReadPost(w, httptest.NewRequest(tt.method, "/hook", strings.NewReader(tt.body)), 32, "only POST")
			if ok != tt.ok || w.Code != tt.code || w.Body.String() != tt.answer || w.Header().Get("Allow") != tt.allow {
				t.Fatalf("ok %v, %d %q Allow %q; want %v, %d %q Allow %q", ok, w.Code, w.Body.String(), w.Header().Get("Allow"), tt.ok, tt.code, tt.answer, tt.allow)
			}
			if ok && string(body) != tt.body {
				t.Errorf("body %q, want %q", body, tt.body)
			}
			if !ok && body != nil {
				t.Errorf("refused, yet body %q", body)
			}
		})
	}
}
