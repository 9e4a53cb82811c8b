package runner

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// startServer is POST /runner/start as Prickle answers it for an agent over
// its cap: the first start holds the run (its wake-up waits for pull) and
// ends its token, so a later request with that token gets 401. lose loses
// the answers of the first n requests after they landed (the connection
// breaks instead); fail answers the first n with 503 instead, landing nothing.
type startServer struct {
	mu         sync.Mutex
	lose, fail int
	requests   int
	held       map[string]int // run token → wake-ups put back
	ended      map[string]bool
}

func (s *startServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests++
	token := r.Header.Get("Authorization")
	if s.fail > 0 {
		s.fail--
		s.mu.Unlock()
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	code := http.StatusConflict
	if s.ended[token] {
		code = http.StatusUnauthorized
	} else {
		s.held[token]++
		s.ended[token] = true
	}
	lost := s.lose > 0
	if lost {
		s.lose--
	}
	s.mu.Unlock()
	if lost {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			_ = conn.Close()
		}
		return
	}
	w.WriteHeader(code)
	if code == http.StatusConflict {
		_, _ = w.Write([]byte(`{"error":"held","held_until":"2026-12-02T00:00:00Z","wakeup":"wk_1"}`))
	}
}

// httpStart is the fake Prickle of testRunner with its start check over HTTP.
type httpStart struct {
	*fakeTasks
	m *MCPTasks
}

func (h httpStart) MayStart(ctx context.Context, token, reason string) (bool, time.Time, error) {
	return h.m.MayStart(ctx, token, reason)
}

// A start check whose answer is lost after it held the run is sent again;
// the retry finds the run's token ended by that hold and the run does not
// start: it comes back once, as the held wake-up, not twice (now and then).
func TestAStartCheckRetriedAfterALostAnswerStartsOneRun(t *testing.T) {
	for _, tc := range []struct {
		name        string
		lose, fail  int
		wantStarted bool
		wantHeld    int
	}{
		{name: "answer lost after the hold", lose: 1, wantHeld: 1},
		{name: "503 then the hold", fail: 1, wantHeld: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := &startServer{lose: tc.lose, fail: tc.fail, held: map[string]int{}, ended: map[string]bool{}}
			ts := httptest.NewServer(srv)
			defer ts.Close()
			r, tasks, dir, _ := testRunner(t, `echo ran >> out/$PRICKLE_RUN_ID`, 1, time.Minute)
			r.Tasks = httpStart{fakeTasks: tasks, m: NewMCPTasks(ts.URL)}
			woken := make(chan struct{}, 1)
			r.OnHeld = func() { woken <- struct{}{} }
			hold := &countingHold{}
			r.Offer("run_l", payload("t_lost", "run_l"), "webhook", hold)
			r.Wait()
			_, err := os.Stat(filepath.Join(dir, "out", "run_l"))
			if started := err == nil; started != tc.wantStarted {
				t.Errorf("the run started: %v, want %v (Prickle keeps its held wake-up: a start now would be a second run)", started, tc.wantStarted)
			}
			select {
			case <-woken:
			case <-time.After(5 * time.Second):
				t.Error("the drain was not woken to claim the held wake-up")
			}
			srv.mu.Lock()
			defer srv.mu.Unlock()
			if srv.requests != 2 || srv.held["Bearer prk_r_run_l"] != tc.wantHeld {
				t.Errorf("%d start requests, %d wake-ups put back; want 2 and %d", srv.requests, srv.held["Bearer prk_r_run_l"], tc.wantHeld)
			}
			if hold.done != 1 {
				t.Errorf("the delivery was finished %d times, want once", hold.done)
			}
		})
	}
}

// EndRun's retry after a lost answer finds the token ended (401): done.
func TestEndRunRetriedAfterALostAnswerIsDone(t *testing.T) {
	srv := &startServer{lose: 1, held: map[string]int{}, ended: map[string]bool{}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	if err := NewMCPTasks(ts.URL).EndRun(context.Background(), "prk_r_e", nil); err != nil {
		t.Errorf("EndRun after a lost answer = %v; want done", err)
	}
	if srv.requests != 2 {
		t.Errorf("%d requests, want 2 (the first lost, then the retry)", srv.requests)
	}
}
