package wakeup

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/domain/wakeup"
)

func TestReceiver(t *testing.T) {
	now := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	hooks := &fakeHooks{hooks: map[string]wakeup.Hook{"bo/codex": {Agent: "bo/codex", URL: "http://127.0.0.1:3000/dev/wake/bo/codex", Secret: secret}}}
	var delivered []string
	fail := false
	rv := NewReceiver(hooks, func(_ context.Context, agent string, p wakeup.Payload) error {
		if fail {
			return errors.New("outbox full")
		}
		delivered = append(delivered, agent+" "+p.TaskID+" "+p.RunID+" "+p.Reason)
		return nil
	})
	rv.Now = func() time.Time { return now }
	body := `{"task_id":"t1","run_id":"run_1","run_token":"prk_r_x","reason":"step_decided","resumes_run":"run_0"}`
	signed := func(method, path, body string, ts time.Time, key string) *http.Request {
		r := httptest.NewRequest(method, path, strings.NewReader(body))
		r.Header.Set(wakeup.TimestampHeader, strconv.FormatInt(ts.Unix(), 10))
		r.Header.Set(wakeup.SignatureHeader, wakeup.Sign(key, ts.Unix(), []byte(body)))
		return r
	}
	tests := []struct {
		name string
		req  *http.Request
		fail bool
		code int
	}{
		{"verified", signed("POST", "/dev/wake/bo/codex", body, now, secret), false, 204},
		{"GET", signed("GET", "/dev/wake/bo/codex", "", now, secret), false, 405},
		{"unknown agent", signed("POST", "/dev/wake/zed/ghost", body, now, secret), false, 404},
		{"wrong secret", signed("POST", "/dev/wake/bo/codex", body, now, "whsec_another_secret_000"), false, 401},
		{"stale", signed("POST", "/dev/wake/bo/codex", body, now.Add(-10*time.Minute), secret), false, 401},
		{"not a payload", signed("POST", "/dev/wake/bo/codex", `{"hello":1}`, now, secret), false, 400},
		{"delivery fails", signed("POST", "/dev/wake/bo/codex", body, now, secret), true, 500},
		{"no agent", signed("POST", "/dev/wake/", body, now, secret), false, 404},
		{"too big", signed("POST", "/dev/wake/bo/codex", strings.Repeat("x", 65<<10), now, secret), false, 413},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fail = tt.fail
			w := httptest.NewRecorder()
			rv.ServeHTTP(w, tt.req)
			if w.Code != tt.code {
				t.Errorf("status %d (%s), want %d", w.Code, w.Body.String(), tt.code)
			}
			if w.Code == http.StatusMethodNotAllowed && (w.Header().Get("Allow") != "POST" || w.Body.String() != "wake requests are POSTed\n") {
				t.Errorf("405 answered Allow %q, %q", w.Header().Get("Allow"), w.Body.String())
			}
			if w.Code == http.StatusRequestEntityTooLarge && w.Body.String() != "body too large or unreadable\n" {
				t.Errorf("413 answered %q", w.Body.String())
			}
		})
	}
	if len(delivered) != 1 || delivered[0] != "bo/codex t1 run_1 step_decided" {
		t.Errorf("delivered %v", delivered)
	}
}
