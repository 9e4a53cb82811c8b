package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// A Claude Code run's usage reaches Prickle with its end: the cost Claude
// Code computed, the tokens, turns, time, and the model that cost most.
func TestAClaudeRunsUsageIsReportedWithItsEnd(t *testing.T) {
	r, tasks, dir := claudeRunner(t)
	answer(t, dir, `{"type":"result","subtype":"success","is_error":false,"session_id":"SID","stop_reason":"end_turn","total_cost_usd":20.5,"num_turns":5,"duration_ms":8656,`+
		`"usage":{"input_tokens":5000000,"output_tokens":10,"cache_creation_input_tokens":2,"cache_read_input_tokens":3},`+
		`"modelUsage":{"claude-haiku-4-5":{"costUSD":0.01},"claude-opus-5-5":{"costUSD":20.49}}}`)
	r.Offer("run_u", payload("t_usage", "run_u"), "webhook", nil)
	r.Wait()
	tasks.mu.Lock()
	defer tasks.mu.Unlock()
	u := tasks.usage["prk_r_run_u"]
	want := Usage{CostUSD: 20.5, InputTokens: 5000005, OutputTokens: 10, Turns: 5, DurationMS: 8656, Model: "claude-opus-5-5"}
	if u == nil || *u != want {
		t.Fatalf("reported %+v, want %+v", u, want)
	}
	if rec := lastRecord(t, dir); rec.Usage == nil || *rec.Usage != want {
		t.Errorf("runs.jsonl usage = %+v", rec.Usage)
	}
}

// A run a webhook delivered asks first; held by the cap, it does not start,
// its delivery is finished (Prickle keeps the wake-up) and the drain is
// woken. A claimed run is not asked: Prickle checked it at the claim.
func TestAHeldRunDoesNotStart(t *testing.T) {
	r, tasks, dir, _ := testRunner(t, `echo ran >> out/$PRICKLE_RUN_ID`, 1, time.Minute)
	tasks.capped = true
	woken := make(chan struct{}, 1)
	r.OnHeld = func() { woken <- struct{}{} }
	hold := &countingHold{}
	r.Offer("run_h", payload("t_held", "run_h"), "webhook", hold)
	r.Wait()
	select {
	case <-woken:
	case <-time.After(5 * time.Second):
		t.Fatal("the drain was not woken")
	}
	if _, err := os.Stat(filepath.Join(dir, "out", "run_h")); err == nil {
		t.Error("a held run started")
	}
	if hold.done != 1 {
		t.Errorf("the held delivery was finished %d times, want once", hold.done)
	}
	r.Offer("wk_1", payload("t_claimed", "run_c"), ViaPull, &countingHold{})
	r.Wait()
	tasks.mu.Lock()
	defer tasks.mu.Unlock()
	if strings.Join(tasks.asked, ",") != "prk_r_run_h" {
		t.Errorf("asked for %v; want the webhook's run only", tasks.asked)
	}
}

type countingHold struct {
	mu   sync.Mutex
	done int
}

func (h *countingHold) Done(context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.done++
	return nil
}
func (h *countingHold) Keep(context.Context) error { return nil }
func (h *countingHold) Next() time.Time            { return time.Time{} }

// The report and the start check over HTTP: the usage as POST
// /runner/ended's body; a report Prickle refuses is left out and the token
// still ended; /runner/start's 204, 409 (held, until when) and 404 (an
// older Prickle: start).
func TestEndRunAndMayStartOverHTTP(t *testing.T) {
	var mu sync.Mutex
	var ends []string
	startCode := http.StatusNoContent
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		switch r.URL.Path {
		case EndedPath:
			ends = append(ends, r.Header.Get("Authorization")+" "+string(b))
			if strings.Contains(string(b), "refuse-me") {
				w.WriteHeader(http.StatusBadRequest)
				_, _ = io.WriteString(w, `{"error":"model must be at most 100 characters"}`)
				return
			}
			w.WriteHeader(http.StatusNoContent)
		case StartPath:
			if string(b) != `{"reason":"step_decided"}` {
				t.Errorf("start body %s", b)
			}
			w.WriteHeader(startCode)
			if startCode == http.StatusConflict {
				_, _ = io.WriteString(w, `{"error":"held","held_until":"2026-12-02T00:00:00Z","wakeup":"wk_1"}`)
			}
		}
	}))
	defer srv.Close()
	m := NewMCPTasks(srv.URL)
	ctx := context.Background()
	if err := m.EndRun(ctx, "prk_r_1", &Usage{CostUSD: 0.5, InputTokens: 10, Turns: 2, Model: "claude-opus-5-5"}); err != nil {
		t.Fatal(err)
	}
	if err := m.EndRun(ctx, "prk_r_2", nil); err != nil {
		t.Fatal(err)
	}
	if err := m.EndRun(ctx, "prk_r_3", &Usage{Model: "refuse-me"}); !errors.Is(err, ErrUsageRefused) || !strings.Contains(err.Error(), "at most 100 characters") {
		t.Errorf("a refused report = %v, want ErrUsageRefused with Prickle's reason", err)
	}
	mu.Lock()
	want := []string{`Bearer prk_r_1 {"cost_usd":0.5,"input_tokens":10,"output_tokens":0,"turns":2,"duration_ms":0,"model":"claude-opus-5-5"}`,
		"Bearer prk_r_2 ", `Bearer prk_r_3 {"cost_usd":0,"input_tokens":0,"output_tokens":0,"turns":0,"duration_ms":0,"model":"refuse-me"}`, "Bearer prk_r_3 "}
	if strings.Join(ends, "\n") != strings.Join(want, "\n") {
		t.Errorf("ended:\n%s\nwant:\n%s", strings.Join(ends, "\n"), strings.Join(want, "\n"))
	}
	mu.Unlock()
	for _, c := range []struct {
		code int
		held bool
	}{{http.StatusNoContent, false}, {http.StatusConflict, true}, {http.StatusNotFound, false}} {
		mu.Lock()
		startCode = c.code
		mu.Unlock()
		held, until, err := m.MayStart(ctx, "prk_r_4", "step_decided")
		if err != nil || held != c.held || (held && !until.Equal(time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC))) {
			t.Errorf("HTTP %d: held %v until %s, %v", c.code, held, until, err)
		}
	}
}

// The drain claims what Prickle holds, long-polling while it says held,
// offers what comes, and stops once nothing waits and nothing is held.
func TestDrainClaimsHeldWakeupsUntilNoneWait(t *testing.T) {
	var mu sync.Mutex
	var bodies []map[string]int
	answers := []string{
		`{"wakeups":[],"held_until":"2026-12-02T00:00:00Z"}`,
		`{"wakeups":[],"held_until":"2026-12-02T00:00:00Z"}`,
		`{"wakeups":[{"id":"wk_1","claim":"c1","visible_until":"2030-01-01T00:00:00Z","delivery":{"task_id":"t1","run_id":"run_1","run_token":"prk_r_1","reason":"task_routed"}}]}`,
		`{"wakeups":[]}`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if r.URL.Path != ClaimPath {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		var b map[string]int
		_ = json.NewDecoder(r.Body).Decode(&b)
		bodies = append(bodies, b)
		a := `{"wakeups":[]}`
		if len(answers) > 0 {
			a, answers = answers[0], answers[1:]
		}
		_, _ = io.WriteString(w, a)
	}))
	defer srv.Close()
	run := &pullRunner{free: 2}
	p := NewPuller(srv.URL, "prk_a_agent", 25, run, slog.New(slog.NewJSONHandler(io.Discard, nil)))
	p.drainOnce(context.Background())
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 4 || bodies[0]["wait_seconds"] != 0 || bodies[1]["wait_seconds"] != 25 {
		t.Errorf("claims %v: want a first look without waiting, then long polls, four in all", bodies)
	}
	run.mu.Lock()
	defer run.mu.Unlock()
	if len(run.got) != 1 || run.got[0].RunID != "run_1" {
		t.Errorf("offered %+v", run.got)
	}
}

// A Codex run's usage: over the turns it started, each turn's latest total
// less the total before it; the previous run's last turn, which a resumed
// thread reports again, counts nothing (the thread goes on over the task's runs).
func TestCodexUsageIsTheRunsOwn(t *testing.T) {
	var u codexUsage
	u.setModel("gpt-5.1-codex")
	note := func(turn string, total, last int64) {
		u.update(json.RawMessage(fmt.Sprintf(`{"threadId":"th","turnId":%q,"tokenUsage":{"total":{"inputTokens":%d,"outputTokens":%d},"last":{"inputTokens":%d,"outputTokens":%d},"modelContextWindow":null}}`,
			turn, total, total/10, last, last/10)))
	}
	note("t_previous", 1000, 100) // the resumed thread's last turn, reported again
	u.turn("t1")
	note("t1", 1100, 100)
	note("t1", 1300, 200)
	u.turn("t2")
	note("t2", 1400, 100)
	u.update(json.RawMessage(`not json`))
	got := u.report(1500 * time.Millisecond)
	if want := (Usage{InputTokens: 400, OutputTokens: 40, Turns: 2, DurationMS: 1500, Model: "gpt-5.1-codex"}); got != want {
		t.Errorf("usage = %+v, want %+v", got, want)
	}
	line, _ := json.Marshal(map[string]any{"level": "INFO", "msg": CodexUsageMsg, "usage": got})
	out := []byte("{\"msg\":\"turn end\"}\n" + string(line) + "\n")
	if u := templateUsage(TemplateCodex, out); u == nil || *u != got {
		t.Errorf("the runner reads %+v from codex-run's output", u)
	}
	if u := templateUsage(TemplateCommand, out); u != nil {
		t.Errorf("a command run reported %+v", u)
	}
}
