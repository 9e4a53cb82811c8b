package runner

import (
	"context"
	"github.com/useprickle/prickle/shared/domain/wakeup"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// offers records what the webhook hands on; a run id is taken once.
type offers struct {
	got      []wakeup.Payload
	stopping bool
}

func (o *offers) Offer(_ string, w wakeup.Payload, _ string, _ Hold) Offered {
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
	journal := NewJournal(t.TempDir(), "prk_a_agent")
	h := &WebhookHandler{Secret: secret, Runner: o, Journal: &journal, Now: func() time.Time { return now }, Log: slog.New(slog.NewJSONHandler(io.Discard, nil))}
	body := `{"task_id":"t1","run_id":"run_1","run_token":"prk_r_x","reason":"task_routed","resumes_run":""}`
	req := func(method, body string, ts time.Time, key string) *http.Request {
		r := httptest.NewRequest(method, "/prickle", strings.NewReader(body))
		r.Header.Set(wakeup.TimestampHeader, strconv.FormatInt(ts.Unix(), 10))
		r.Header.Set(wakeup.SignatureHeader, wakeup.Sign(key, ts.Unix(), []byte(body)))
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
			if w.Code == http.StatusMethodNotAllowed && (w.Header().Get("Allow") != "POST" || w.Body.String() != "wake-ups are POSTed\n") {
				t.Errorf("405 answered Allow %q, %q", w.Header().Get("Allow"), w.Body.String())
			}
			if w.Code == http.StatusRequestEntityTooLarge && w.Body.String() != "body too large or unreadable\n" {
				t.Errorf("413 answered %q", w.Body.String())
			}
		})
	}
	if len(o.got) != 1 || o.got[0].RunID != "run_1" || o.got[0].RunToken != "prk_r_x" {
		t.Errorf("offered %+v, want run_1 once", o.got)
	}
	// The delivery taken is journaled until its run ends by itself; refused ones are not.
	if pending, err := journal.Pending(); err != nil || len(pending) != 1 || pending[0].RunID != "run_1" || pending[0].RunToken != "prk_r_x" {
		t.Errorf("journal %+v (%v), want run_1", pending, err)
	}
	o.stopping = true
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req("POST", strings.Replace(body, "run_1", "run_9", 1), now, secret))
	if w.Code != http.StatusServiceUnavailable {
		t.Errorf("while stopping: %d, want 503 so Prickle retries", w.Code)
	}
	if pending, _ := journal.Pending(); len(pending) != 1 {
		t.Errorf("a delivery refused while stopping stays journaled: %+v", pending)
	}
}

func TestJournal(t *testing.T) {
	state := t.TempDir()
	alice, bob := NewJournal(state, "prk_a_alice"), NewJournal(state, "prk_a_bob")
	first := wakeup.Payload{TaskID: "t1", RunID: "run_1", RunToken: "prk_r_1", Reason: wakeup.ReasonTaskRouted}
	second := wakeup.Payload{TaskID: "t2", RunID: "run_2", RunToken: "prk_r_2", Reason: wakeup.ReasonStepDecided, ResumesRun: "run_0"}
	h1, err := alice.Hold(first)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := alice.Hold(second); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(alice.Dir, "*.json"))
	for _, f := range files {
		if fi, _ := os.Stat(f); fi.Mode().Perm() != 0o600 {
			t.Errorf("%s is %v: it holds a run token, want 0600", f, fi.Mode().Perm())
		}
	}
	if got, _ := alice.Pending(); len(got) != 2 || got[1] != second {
		t.Errorf("alice's journal %+v", got)
	}
	if got, _ := bob.Pending(); len(got) != 0 {
		t.Errorf("bob's runner, sharing the state dir, would replay %+v", got)
	}
	if err := h1.Done(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, _ := alice.Pending(); len(got) != 1 || got[0] != second {
		t.Errorf("after the first run ended: %+v", got)
	}
	if !h1.Next().IsZero() || h1.Keep(context.Background()) != nil {
		t.Error("a journaled delivery needs no keeping")
	}
}
