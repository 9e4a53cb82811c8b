package runner

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/wake"
)

// offers records what the webhook hands on; a run id is taken once.
type offers struct {
	got      []wake.Payload
	stopping bool
}

func (o *offers) Offer(_ string, w wake.Payload, _ string, _ Ack) Offered {
	if o.stopping {
		return Stopping
	}
	for _, p := range o.got {
		if p.RunID == w.RunID {
			return Repeated
		}
	}
	o.got = append(o.got, w)
	return Taken
}

func TestWebhookHandler(t *testing.T) {
	const secret = "whsec_runner_test_secret_0123456789"
	now := time.Date(2026, 12, 1, 22, 0, 0, 0, time.UTC)
	o := &offers{}
	h := &WebhookHandler{Secret: secret, Runner: o, Now: func() time.Time { return now }, Log: slog.New(slog.NewJSONHandler(io.Discard, nil))}
	body := `{"task_id":"t1","run_id":"run_1","run_token":"prk_r_x","reason":"task_routed","resumes_run":""}`
	req := func(method, body string, ts time.Time, key string) *http.Request {
		r := httptest.NewRequest(method, "/prickle", strings.NewReader(body))
		r.Header.Set(wake.TimestampHeader, strconv.FormatInt(ts.Unix(), 10))
		r.Header.Set(wake.SignatureHeader, wake.Sign(key, ts.Unix(), []byte(body)))
		return r
	}
	big := `{"task_id":"t1","run_id":"run_2","run_token":"` + strings.Repeat("x", 20<<10) + `"}`
	tests := []struct {
		name string
		req  *http.Request
		code int
	}{
		{"bad signature", req("POST", body, now, "whsec_some_other_secret_0000000"), 401},
		{"stale", req("POST", body, now.Add(-6*time.Minute), secret), 401},
		{"from the future", req("POST", body, now.Add(6*time.Minute), secret), 401},
		{"body changed after signing", func() *http.Request {
			r := req("POST", body, now, secret)
			r.Body = io.NopCloser(strings.NewReader(strings.Replace(body, "t1", "t2", 1)))
			return r
		}(), 401},
		{"GET", req("GET", "", now, secret), 405},
		{"too big", req("POST", big, now, secret), 413},
		{"not a payload", req("POST", `{"hello":1}`, now, secret), 400},
		{"taken", req("POST", body, now, secret), 202},
		{"replayed", req("POST", body, now, secret), 200},
		{"replayed at the window's edge", req("POST", body, now.Add(-4*time.Minute), secret), 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, tt.req)
			if w.Code != tt.code {
				t.Errorf("status %d (%s), want %d", w.Code, w.Body.String(), tt.code)
			}
		})
	}
	if len(o.got) != 1 || o.got[0].RunID != "run_1" || o.got[0].RunToken != "prk_r_x" {
		t.Errorf("offered %+v, want run_1 once", o.got)
	}
	o.stopping = true
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req("POST", strings.Replace(body, "run_1", "run_9", 1), now, secret))
	if w.Code != http.StatusServiceUnavailable {
		t.Errorf("while stopping: %d, want 503 so Prickle retries", w.Code)
	}
}
