//go:build integration

package runnerapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/domain/audit"
	"github.com/useprickle/prickle/shared/domain/budget"
	"github.com/useprickle/prickle/shared/domain/modelspend"
	"github.com/useprickle/prickle/shared/domain/wakeup"
	"github.com/useprickle/prickle/shared/jobs/runnerapi"
	"github.com/useprickle/prickle/shared/team/mint"
)

func usd(v float64) budget.Micros {
	m, _ := budget.FromUnits(v)
	return m
}

// today is alice/writer's cap, day and month now.
func (e *env) today() modelspend.AgentSpend {
	e.t.Helper()
	a, err := e.spend.Spend(context.Background(), "alice/writer")
	must(e.t, err)
	return a
}

func (e *env) works(token string) bool {
	_, err := identity.Authenticate(context.Background(), e.st, token, e.now())
	return err == nil
}

// TestARunsReportIsCountedOnceForItsOwnRun: POST /runner/ended with a
// usage body counts it for the run its token names (never another run, task
// or agent), once: the token ends with it, so a replay is refused.
func TestARunsReportIsCountedOnceForItsOwnRun(t *testing.T) {
	e := newEnv(t, false)
	ctx := context.Background()
	tk := e.routed("tsk_spend01")
	a, err := e.adm.StartRun(ctx, mint.ByOperator, "alice/writer", tk.ID, "")
	must(t, err)
	b, err := e.adm.StartRun(ctx, mint.ByOperator, "alice/writer", tk.ID, "")
	must(t, err)
	report := `{"cost_usd":0.0123,"input_tokens":1200,"output_tokens":300,"turns":5,"duration_ms":8656,"model":"claude-opus-5-5"}`
	if code, body := e.post(runnerapi.EndedPath, a.RunToken, report); code != http.StatusNoContent {
		t.Fatalf("ended with a report = %d %s", code, body)
	}
	if e.works(a.RunToken) {
		t.Error("the reporting run's token still works")
	}
	if code, _ := e.post(runnerapi.EndedPath, a.RunToken, `{"cost_usd":900}`); code != http.StatusUnauthorized {
		t.Errorf("a replayed report = %d, want 401", code)
	}
	if code, _ := e.post(runnerapi.EndedPath, e.alice, `{"cost_usd":900}`); code != http.StatusUnauthorized {
		t.Errorf("a report with the agent token = %d, want 401", code)
	}
	if code, _ := e.post(runnerapi.EndedPath, b.RunToken, `{"cost_usd":1,"turns":1}`); code != http.StatusNoContent {
		t.Errorf("the other run's report = %d", code)
	}
	runs, err := e.st.TaskRuns(ctx, tk.ID)
	must(t, err)
	if len(runs) != 2 {
		t.Fatalf("runs = %+v, want a and b", runs)
	}
	byRun := map[string]modelspend.Run{runs[0].RunID: runs[0], runs[1].RunID: runs[1]}
	if r := byRun[a.RunID]; r.Cost != usd(0.0123) || r.InputTokens != 1200 || r.Model != "claude-opus-5-5" || r.Agent != "alice/writer" || r.Project != "website-v2" {
		t.Errorf("run a = %+v", r)
	}
	if r := byRun[b.RunID]; r.Cost != usd(1) || r.Turns != 1 {
		t.Errorf("run b = %+v: another run's token counted for it", r)
	}
	if d := e.today().Today; d.Cost != usd(1.0123) || d.Runs != 2 {
		t.Errorf("today = %+v, want both runs once", d.Totals)
	}
	if n := e.asks.count(); n != 0 {
		t.Errorf("asked %d times with no cap", n)
	}
}

// TestReportAttacks: a report out of bounds is refused with 400 naming the
// bound, counts nothing and leaves the run token working (the runner ends it
// without the report); an oversized body is 413.
func TestReportAttacks(t *testing.T) {
	e := newEnv(t, false)
	ctx := context.Background()
	tk := e.routed("tsk_spend02")
	run, err := e.adm.StartRun(ctx, mint.ByOperator, "alice/writer", tk.ID, "")
	must(t, err)
	cases := []struct{ body, says string }{
		{`{"cost_usd":-1}`, "cost_usd must be a number from 0 to 1000"},
		{`{"cost_usd":1001}`, "cost_usd must be a number from 0 to 1000"},
		{`{"cost_usd":NaN}`, "is not {cost_usd"},
		{`{"cost_usd":"NaN"}`, "is not {cost_usd"},
		{`{"cost_usd":1e309}`, "is not {cost_usd"},
		{`{"input_tokens":-5}`, "input_tokens must be from 0 to 10000000000"},
		{`{"output_tokens":20000000000}`, "output_tokens must be from 0 to 10000000000"},
		{`{"turns":1000000}`, "turns must be from 0 to 100000"},
		{`{"duration_ms":-1}`, "duration_ms must be from 0 to 604800000"},
		{`{"model":"` + strings.Repeat("x", 200) + `"}`, "model must be at most 100 characters"},
		{`{"model":"a\"b<i>"}`, "model \""},
		{`"cost"`, "must be a JSON object"},
	}
	for _, c := range cases {
		code, body := e.post(runnerapi.EndedPath, run.RunToken, c.body)
		var msg struct {
			Error string `json:"error"`
		}
		_ = json.Unmarshal(body, &msg)
		if code != http.StatusBadRequest || !strings.Contains(msg.Error, c.says) {
			t.Errorf("report %.40s = %d %s; want 400 saying %q", c.body, code, body, c.says)
		}
	}
	if code, body := e.post(runnerapi.EndedPath, run.RunToken, `{"model":"`+strings.Repeat("m", 5000)+`"}`); code != http.StatusRequestEntityTooLarge || !strings.Contains(string(body), "4096 bytes") {
		t.Errorf("a huge report = %d %s, want 413 naming 4096 bytes", code, body)
	}
	if !e.works(run.RunToken) {
		t.Fatal("a refused report ended the run's token")
	}
	if runs, _ := e.st.TaskRuns(ctx, tk.ID); len(runs) != 0 {
		t.Errorf("a refused report was counted: %+v", runs)
	}
	if d := e.today().Today; d.Runs != 0 || d.Cost != 0 {
		t.Errorf("a refused report was counted: %+v", d.Totals)
	}
	// The runner then ends the token without the report.
	if code, _ := e.post(runnerapi.EndedPath, run.RunToken, ``); code != http.StatusNoContent || e.works(run.RunToken) {
		t.Errorf("ended without a report = %d", code)
	}
}

type heldAnswer struct {
	Wakeups   []runnerapi.Wakeup `json:"wakeups"`
	HeldUntil string             `json:"held_until"`
	Wakeup    string             `json:"wakeup"`
	Error     string             `json:"error"`
}

// TestACappedAgentsWakeupsWaitUntilTheOwnerRaisesIt: once a run's report
// takes the day to the cap, the agent's wake-ups are not handed out (the
// claim says until when they are held), they outlive their first day, the
// owner is asked once, and raising the cap hands them out at once.
func TestACappedAgentsWakeupsWaitUntilTheOwnerRaisesIt(t *testing.T) {
	e := newEnv(t, true)
	e.clock.t = time.Date(2026, 12, 1, 1, 0, 0, 0, time.UTC)
	ctx := context.Background()
	must(t, e.spend.SetCap(ctx, "alice", "website-v2", "alice/writer", usd(1), audit.ViaOwners))
	e.routed("tsk_cap01")
	first := e.claim(e.alice, `{"wait_seconds":0}`)
	if len(first) != 1 {
		t.Fatalf("under the cap: claimed %+v", first)
	}
	if code, body := e.post(runnerapi.EndedPath, first[0].Delivery.RunToken, `{"cost_usd":1.5,"turns":3}`); code != http.StatusNoContent {
		t.Fatalf("ended = %d %s", code, body)
	}
	if e.ack(e.alice, first[0]) != http.StatusNoContent {
		t.Fatal("ack")
	}
	if n := e.asks.count(); n != 1 {
		t.Fatalf("the report that reached the cap asked %d times, want once", n)
	}
	next := e.routed("tsk_cap02")
	for range 3 {
		code, body := e.post(runnerapi.ClaimPath, e.alice, `{"wait_seconds":2,"max":10}`)
		var a heldAnswer
		must(t, json.Unmarshal(body, &a))
		if code != http.StatusOK || len(a.Wakeups) != 0 || a.HeldUntil == "" {
			t.Fatalf("over the cap the claim = %d %s; want no wake-up, held_until", code, body)
		}
		if until, err := time.Parse(time.RFC3339, a.HeldUntil); err != nil || !until.Equal(modelspend.NextDay(e.now())) {
			t.Errorf("held_until = %q, want the next UTC day", a.HeldUntil)
		}
	}
	if n := e.asks.count(); n != 1 {
		t.Errorf("asked %d times, want once a day", n)
	}
	// Left as it is, and no runner claims the next day until noon: a day and
	// a half after it was stored, past its first day, it still waits.
	got, err := e.st.ClaimableWakeups(ctx, "alice/writer", time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC), 10)
	must(t, err)
	if len(got) != 1 || got[0].TaskID != next.ID {
		t.Fatalf("the held wake-up is lost after its first day: %+v", got)
	}
	// The same day, raised: it is handed out at once.
	_, err = e.spend.Decide(ctx, "alice", "alice/writer", modelspend.Day(e.now()), true, audit.ViaLink)
	must(t, err)
	after := e.claim(e.alice, `{"wait_seconds":0}`)
	if len(after) != 1 || after[0].Delivery.TaskID != next.ID {
		t.Fatalf("after the raise: claimed %+v", after)
	}
}

// TestAWebhookRunOverTheCapWaitsInPrickle: POST /runner/start with a run
// token says whether the run may start. Under the cap 204 and nothing
// changes; over it 409, the run token ends and the wake-up waits in the pull
// queue (same task, reason and run it resumes) until the cap allows.
func TestAWebhookRunOverTheCapWaitsInPrickle(t *testing.T) {
	e := newEnv(t, true)
	ctx := context.Background()
	tk := e.routed("tsk_start01")
	routed := e.claim(e.alice, `{"wait_seconds":0}`)
	if len(routed) != 1 || e.ack(e.alice, routed[0]) != http.StatusNoContent {
		t.Fatalf("routed: %+v", routed)
	}
	resumed, err := e.adm.StartRun(ctx, mint.ByWebhook("ev_decided", wakeup.ReasonStepDecided), "alice/writer", tk.ID, routed[0].Delivery.RunID)
	must(t, err)
	if code, body := e.post(runnerapi.StartPath, resumed.RunToken, `{"reason":"step_decided"}`); code != http.StatusNoContent {
		t.Fatalf("no cap: start = %d %s", code, body)
	}
	must(t, e.spend.SetCap(ctx, "alice", "website-v2", "alice/writer", usd(1), audit.ViaOwners))
	spent, err := e.adm.StartRun(ctx, mint.ByOperator, "alice/writer", tk.ID, "")
	must(t, err)
	if code, _ := e.post(runnerapi.EndedPath, spent.RunToken, `{"cost_usd":2}`); code != http.StatusNoContent {
		t.Fatal("report")
	}
	code, body := e.post(runnerapi.StartPath, resumed.RunToken, `{"reason":"step_decided"}`)
	var a heldAnswer
	must(t, json.Unmarshal(body, &a))
	if code != http.StatusConflict || a.HeldUntil == "" || !wakeup.ValidPendingID(a.Wakeup) || !strings.Contains(a.Error, "daily model-spend cap") {
		t.Fatalf("over the cap: start = %d %s; want 409 with held_until and the wake-up", code, body)
	}
	if e.works(resumed.RunToken) {
		t.Error("the held run's token still works")
	}
	if got := e.claim(e.alice, `{"wait_seconds":0}`); len(got) != 0 {
		t.Fatalf("held, yet claimed: %+v", got)
	}
	_, err = e.spend.Decide(ctx, "alice", "alice/writer", modelspend.Day(e.now()), true, audit.ViaSlack)
	must(t, err)
	got := e.claim(e.alice, `{"wait_seconds":0}`)
	if len(got) != 1 || got[0].ID != a.Wakeup || got[0].Delivery.TaskID != tk.ID || got[0].Delivery.Reason != wakeup.ReasonStepDecided || got[0].Delivery.ResumesRun != routed[0].Delivery.RunID {
		t.Fatalf("after the raise the held run comes back as %+v", got)
	}
	e.checkRunToken(got[0], "alice/writer")
}

// TestStartAttacks: only a run token asks to start its own run; a reason
// that is not a wake-up's is refused before anything is held.
func TestStartAttacks(t *testing.T) {
	e := newEnv(t, false)
	ctx := context.Background()
	tk := e.routed("tsk_start02")
	run, err := e.adm.StartRun(ctx, mint.ByOperator, "alice/writer", tk.ID, "")
	must(t, err)
	for _, c := range []struct {
		name, token, body string
		code              int
	}{
		{"agent token", e.alice, `{"reason":"task_routed"}`, 401},
		{"no token", "", `{"reason":"task_routed"}`, 401},
		{"unknown reason", run.RunToken, `{"reason":"free_run"}`, 400},
		{"not JSON", run.RunToken, `reason=task_routed`, 400},
	} {
		if code, body := e.post(runnerapi.StartPath, c.token, c.body); code != c.code {
			t.Errorf("%s: start = %d %s, want %d", c.name, code, body, c.code)
		}
	}
	if !e.works(run.RunToken) {
		t.Error("a refused start ended the run's token")
	}
}

// TestRacingStartsOverTheCapPutBackOneWakeup: six POST /runner/start at
// once with one run token over the cap (or a runner retrying after a lost
// answer) put the run back once: one wake-up, whose id each 409 names, and
// after the raise one claim hands out one run of the task.
func TestRacingStartsOverTheCapPutBackOneWakeup(t *testing.T) {
	e := newEnv(t, false)
	ctx := context.Background()
	tk := e.routed("tsk_start03")
	routed := e.claim(e.alice, `{"wait_seconds":0}`)
	if len(routed) != 1 || e.ack(e.alice, routed[0]) != http.StatusNoContent {
		t.Fatalf("routed: %+v", routed)
	}
	must(t, e.spend.SetCap(ctx, "alice", "website-v2", "alice/writer", usd(1), audit.ViaOwners))
	spent, err := e.adm.StartRun(ctx, mint.ByOperator, "alice/writer", tk.ID, "")
	must(t, err)
	if code, _ := e.post(runnerapi.EndedPath, spent.RunToken, `{"cost_usd":2}`); code != http.StatusNoContent {
		t.Fatal("report")
	}
	run, err := e.adm.StartRun(ctx, mint.ByWebhook("ev_decided", wakeup.ReasonStepDecided), "alice/writer", tk.ID, routed[0].Delivery.RunID)
	must(t, err)
	const n = 6
	codes := make([]int, n)
	bodies := make([][]byte, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], bodies[i] = e.post(runnerapi.StartPath, run.RunToken, `{"reason":"step_decided"}`)
		}()
	}
	wg.Wait()
	ids := map[string]bool{}
	for i := range n {
		switch codes[i] {
		case http.StatusConflict:
			var a heldAnswer
			must(t, json.Unmarshal(bodies[i], &a))
			ids[a.Wakeup] = true
		case http.StatusUnauthorized: // came after the token ended
		default:
			t.Errorf("racing start = %d %s, want 409 or 401", codes[i], bodies[i])
		}
	}
	if len(ids) != 1 {
		t.Errorf("the 409s name %d wake-ups (%v), want one", len(ids), ids)
	}
	if e.works(run.RunToken) {
		t.Error("the held run's token still works")
	}
	// A runner retrying with the run token after a lost answer is refused.
	if code, _ := e.post(runnerapi.StartPath, run.RunToken, `{"reason":"step_decided"}`); code != http.StatusUnauthorized {
		t.Errorf("a retry after the token ended = %d, want 401", code)
	}
	stored, err := e.st.ClaimableWakeups(ctx, "alice/writer", e.now().Add(time.Minute), 10)
	must(t, err)
	if len(stored) != 1 {
		t.Fatalf("stored %d put-back wake-ups for one run, want 1: %+v", len(stored), stored)
	}
	_, err = e.spend.Decide(ctx, "alice", "alice/writer", modelspend.Day(e.now()), true, audit.ViaOwners)
	must(t, err)
	got := e.claim(e.alice, `{"wait_seconds":0,"max":10}`)
	if len(got) != 1 || !ids[got[0].ID] || got[0].Delivery.TaskID != tk.ID || got[0].Delivery.ResumesRun != routed[0].Delivery.RunID {
		t.Fatalf("after the raise one claim returned %+v, want the one held run", got)
	}
}
