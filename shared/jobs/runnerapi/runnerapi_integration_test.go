//go:build integration

package runnerapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/aws/store"
	"github.com/useprickle/prickle/shared/aws/store/storetest"
	"github.com/useprickle/prickle/shared/domain/audit"
	"github.com/useprickle/prickle/shared/domain/event"
	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/domain/wakeup"
	"github.com/useprickle/prickle/shared/jobs/runnerapi"
	wakeupjob "github.com/useprickle/prickle/shared/jobs/wakeup"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/admin"
	"github.com/useprickle/prickle/shared/team/mint"
)

// clock is a settable clock shared by the waker and the endpoints.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// env is a store on the emulator with two agents in pull mode (no hooks),
// a waker and the endpoints served over HTTP.
type env struct {
	t      *testing.T
	st     *store.Store
	adm    *admin.Admin
	waker  *wakeupjob.Waker
	srv    *httptest.Server
	clock  *clock
	alice  string // alice/writer's agent token
	bob    string // bob/reviewer's agent token
	logged *bytes.Buffer
	// spend is the model spend the endpoints count and cap with; asks are
	// the Model Cap Reached events it published.
	spend *team.ModelSpend
	asks  *asks
}

// asks keeps the events the model spend publishes.
type asks struct {
	mu     sync.Mutex
	events []event.Event
}

func (a *asks) Publish(_ context.Context, evs ...event.Event) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.events = append(a.events, evs...)
	return nil
}

func (a *asks) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.events)
}

// newEnv builds the env; fake time (a settable clock, Sleep advancing it)
// when fakeTime, else the real clock with a short poll.
func newEnv(t *testing.T, fakeTime bool) *env {
	t.Helper()
	ctx := context.Background()
	st := storetest.New(t).Store
	adm := admin.New(st)
	must(t, adm.CreateProject(ctx, team.Project{Slug: "website-v2", Name: "Website v2"}))
	must(t, adm.CreateOwner(ctx, team.Owner{Name: "alice"}))
	must(t, adm.CreateOwner(ctx, team.Owner{Name: "bob"}))
	must(t, adm.CreateAgent(ctx, "alice/writer", []string{"website-v2"}))
	must(t, adm.CreateAgent(ctx, "bob/reviewer", []string{"website-v2"}))
	e := &env{t: t, st: st, adm: adm, waker: wakeupjob.NewWaker(st, adm), logged: &bytes.Buffer{}, asks: &asks{}}
	log := slog.New(slog.NewJSONHandler(e.logged, nil))
	e.spend = team.NewModelSpend(st, e.asks, log)
	var err error
	e.alice, err = adm.MintAgentToken(ctx, "alice/writer")
	must(t, err)
	e.bob, err = adm.MintAgentToken(ctx, "bob/reviewer")
	must(t, err)
	cfg := runnerapi.Config{Tokens: st, Queue: st, Runs: adm, Spend: e.spend, Settings: team.New(st), Log: log, Poll: 50 * time.Millisecond}
	if fakeTime {
		e.clock = &clock{t: time.Now().UTC().Truncate(time.Second)}
		cfg.Now, cfg.Poll = e.clock.now, 5*time.Second
		cfg.Sleep = func(_ context.Context, d time.Duration) error { e.clock.advance(d); return nil }
		e.waker.Now = e.clock.now
		adm.Now = e.clock.now
		e.spend.Now = e.clock.now
	}
	e.srv = httptest.NewServer(runnerapi.New(cfg))
	t.Cleanup(e.srv.Close)
	return e
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func (e *env) now() time.Time {
	if e.clock != nil {
		return e.clock.now()
	}
	return time.Now().UTC()
}

// routed creates a task from bob/reviewer to alice/writer and delivers its
// Task Routed event to the waker, as EventBridge would.
func (e *env) routed(id string) task.Task {
	e.t.Helper()
	ctx := context.Background()
	at := e.now().Truncate(time.Millisecond)
	tk := task.Task{ID: id, Project: "website-v2", State: task.Routed, Requester: "bob/reviewer", Assignee: "alice/writer",
		Packet:    task.Packet{Task: "write the hero copy", DeliverableType: "doc", AcceptanceCriteria: []string{"two lines"}, Files: []string{}, DependsOn: []string{}},
		CreatedAt: at, UpdatedAt: at, Version: 1}
	must(e.t, e.st.CreateTask(ctx, tk, task.Event{At: at, By: "bob/reviewer", Action: "hand_off", To: task.Routed}))
	must(e.t, e.waker.Handle(ctx, event.ForTask(event.TaskRouted, tk, "bob/reviewer", at)))
	return tk
}

type claimAnswer struct {
	Wakeups []runnerapi.Wakeup `json:"wakeups"`
}

func (e *env) post(path, token, body string) (int, []byte) {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.srv.URL+path, strings.NewReader(body))
	must(e.t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	must(e.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	must(e.t, err)
	return resp.StatusCode, b
}

func (e *env) claim(token, body string) []runnerapi.Wakeup {
	e.t.Helper()
	code, b := e.post(runnerapi.ClaimPath, token, body)
	if code != http.StatusOK {
		e.t.Fatalf("claim %s: %d %s", body, code, b)
	}
	var a claimAnswer
	must(e.t, json.Unmarshal(b, &a))
	if a.Wakeups == nil {
		e.t.Fatalf("claim answered %s: want a wakeups list, even empty", b)
	}
	return a.Wakeups
}

func (e *env) ack(token string, w runnerapi.Wakeup) int {
	e.t.Helper()
	code, _ := e.post(runnerapi.AckPath, token, fmt.Sprintf(`{"id":%q,"claim":%q}`, w.ID, w.Claim))
	return code
}

// checkRunToken: the delivery's run token is a run of that agent for that task.
func (e *env) checkRunToken(w runnerapi.Wakeup, agent string) identity.Caller {
	e.t.Helper()
	c, err := identity.Authenticate(context.Background(), e.st, w.Delivery.RunToken, e.now())
	must(e.t, err)
	if c.Kind != identity.KindRun || c.Agent != agent || c.TaskID != w.Delivery.TaskID || c.RunID != w.Delivery.RunID || c.ResumesRun != w.Delivery.ResumesRun {
		e.t.Errorf("run token of %+v is %+v", w.Delivery, c)
	}
	return c
}

// TestTwoClaimersRacing: two runners with the same agent token, polling at
// once, get each wake-up exactly once between them.
func TestTwoClaimersRacing(t *testing.T) {
	e := newEnv(t, false)
	const n = 6
	want := map[string]bool{}
	for i := range n {
		want[e.routed(fmt.Sprintf("tsk_race%02d", i)).ID] = true
	}
	var mu sync.Mutex
	byID := map[string]int{}
	byTask := map[string]int{}
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 2 * n {
				got := e.claim(e.alice, `{"wait_seconds":0,"max":2}`)
				mu.Lock()
				for _, w := range got {
					byID[w.ID]++
					byTask[w.Delivery.TaskID]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(byID) != n || len(byTask) != n {
		t.Fatalf("claimed %d wake-ups for %d tasks, want %d: %v", len(byID), len(byTask), n, byTask)
	}
	for id, c := range byID {
		if c != 1 {
			t.Errorf("wake-up %s claimed %d times", id, c)
		}
	}
	for id := range byTask {
		if !want[id] {
			t.Errorf("claimed a wake-up of task %s, which was not routed", id)
		}
	}
}

// TestUnacknowledgedComesBackAfterTheVisibilityTimeout, with a stale ack
// refused and the fresh one taken once.
func TestUnacknowledgedComesBackAfterTheVisibilityTimeout(t *testing.T) {
	e := newEnv(t, true)
	tk := e.routed("tsk_visible1")
	first := e.claim(e.alice, `{"wait_seconds":0}`)
	if len(first) != 1 || first[0].Delivery.TaskID != tk.ID || first[0].Delivery.Reason != wakeup.ReasonTaskRouted || first[0].Delivery.ResumesRun != "" {
		t.Fatalf("first claim = %+v", first)
	}
	e.checkRunToken(first[0], "alice/writer")
	until, err := time.Parse(time.RFC3339, first[0].VisibleUntil)
	must(t, err)
	if !until.Equal(e.now().Add(wakeup.DefaultVisibility)) {
		t.Errorf("visible_until %s, want now + %s", first[0].VisibleUntil, wakeup.DefaultVisibility)
	}
	if got := e.claim(e.alice, `{"wait_seconds":0}`); len(got) != 0 {
		t.Fatalf("claimed again while invisible: %+v", got)
	}
	// A waiting claim sees nothing until the timeout passes... and then it comes back.
	if got := e.claim(e.alice, `{"wait_seconds":25}`); len(got) != 0 {
		t.Fatalf("claimed again within the visibility timeout: %+v", got)
	}
	e.clock.advance(wakeup.DefaultVisibility)
	second := e.claim(e.alice, `{"wait_seconds":0}`)
	if len(second) != 1 || second[0].ID != first[0].ID {
		t.Fatalf("after the visibility timeout, claim = %+v; want %s again", second, first[0].ID)
	}
	if second[0].Claim == first[0].Claim || second[0].Delivery.RunToken == first[0].Delivery.RunToken || second[0].Delivery.RunID == first[0].Delivery.RunID {
		t.Errorf("a re-claim must get a new receipt and a fresh run: %+v vs %+v", second[0], first[0])
	}
	e.checkRunToken(second[0], "alice/writer")
	// The first claim's run is over (its runner died or stopped): its token no longer works.
	if c, err := identity.Authenticate(context.Background(), e.st, first[0].Delivery.RunToken, e.now()); err == nil {
		t.Errorf("the superseded claim's run token still works: %+v", c)
	}
	if code := e.ack(e.alice, first[0]); code != http.StatusConflict {
		t.Errorf("ack with the superseded claim = %d, want 409", code)
	}
	if code := e.ack(e.alice, second[0]); code != http.StatusNoContent {
		t.Errorf("ack with the latest claim = %d, want 204", code)
	}
	if code := e.ack(e.alice, second[0]); code != http.StatusNoContent {
		t.Errorf("the same ack again = %d, want 204 (idempotent)", code)
	}
	e.clock.advance(2 * wakeup.DefaultVisibility)
	if got := e.claim(e.alice, `{"wait_seconds":0}`); len(got) != 0 {
		t.Errorf("an acknowledged wake-up came back: %+v", got)
	}
}

// TestExtendKeepsAClaimWhileItsRunGoes: a runner extends its claim past
// the visibility timeout, so the wake-up is not delivered again while its
// run goes; a superseded or finished claim is not extended.
func TestExtendKeepsAClaimWhileItsRunGoes(t *testing.T) {
	e := newEnv(t, true)
	e.routed("tsk_extend01")
	got := e.claim(e.alice, `{"wait_seconds":0}`)
	if len(got) != 1 {
		t.Fatalf("claim = %+v", got)
	}
	w := got[0]
	body := fmt.Sprintf(`{"id":%q,"claim":%q}`, w.ID, w.Claim)
	for range 3 {
		e.clock.advance(wakeup.DefaultVisibility - time.Second)
		code, b := e.post(runnerapi.ExtendPath, e.alice, body)
		if code != http.StatusOK {
			t.Fatalf("extend = %d %s", code, b)
		}
		var a struct {
			VisibleUntil string `json:"visible_until"`
		}
		must(t, json.Unmarshal(b, &a))
		if until, err := time.Parse(time.RFC3339, a.VisibleUntil); err != nil || !until.Equal(e.now().Add(wakeup.DefaultVisibility)) {
			t.Errorf("visible_until %q, want now + %s", a.VisibleUntil, wakeup.DefaultVisibility)
		}
		if again := e.claim(e.alice, `{"wait_seconds":0}`); len(again) != 0 {
			t.Fatalf("claimed again while extended: %+v", again)
		}
	}
	if code, b := e.post(runnerapi.ExtendPath, e.alice, fmt.Sprintf(`{"id":%q,"claim":"wkc_guessed"}`, w.ID)); code != http.StatusConflict {
		t.Errorf("extend with another receipt = %d %s, want 409", code, b)
	}
	if code, _ := e.post(runnerapi.ExtendPath, e.bob, body); code != http.StatusNotFound {
		t.Errorf("bob extends alice's wake-up = %d, want 404", code)
	}
	if code := e.ack(e.alice, w); code != http.StatusNoContent {
		t.Fatalf("ack = %d", code)
	}
	if code, _ := e.post(runnerapi.ExtendPath, e.alice, body); code != http.StatusConflict {
		t.Errorf("extend after the ack = %d, want 409", code)
	}
	e.clock.advance(2 * wakeup.DefaultVisibility)
	if again := e.claim(e.alice, `{"wait_seconds":0}`); len(again) != 0 {
		t.Errorf("an acknowledged wake-up came back: %+v", again)
	}
}

// TestARunnerEndsARunsToken: POST /runner/ended with a run token ends that
// token (and only it), recorded in the audit trail; an agent token there is
// refused and keeps working.
func TestARunnerEndsARunsToken(t *testing.T) {
	e := newEnv(t, false)
	ctx := context.Background()
	tk := e.routed("tsk_ended01")
	ended, err := e.adm.StartRun(ctx, mint.ByOperator, "alice/writer", tk.ID, "")
	must(t, err)
	other, err := e.adm.StartRun(ctx, mint.ByOperator, "alice/writer", tk.ID, "")
	must(t, err)
	if code, b := e.post(runnerapi.EndedPath, e.alice, ``); code != http.StatusUnauthorized {
		t.Fatalf("the agent token on %s = %d %s, want 401", runnerapi.EndedPath, code, b)
	}
	if _, err := identity.Authenticate(ctx, e.st, e.alice, e.now()); err != nil {
		t.Fatalf("the agent token stopped working: %v", err)
	}
	if code, b := e.post(runnerapi.EndedPath, ended.RunToken, ``); code != http.StatusNoContent {
		t.Fatalf("ended = %d %s", code, b)
	}
	if _, err := identity.Authenticate(ctx, e.st, ended.RunToken, e.now()); err == nil {
		t.Error("the ended run's token still works")
	}
	if _, err := identity.Authenticate(ctx, e.st, other.RunToken, e.now()); err != nil {
		t.Errorf("another run's token was ended too: %v", err)
	}
	if code, _ := e.post(runnerapi.EndedPath, ended.RunToken, ``); code != http.StatusUnauthorized {
		t.Errorf("ending it again = %d, want 401 (it is gone)", code)
	}
	entries, err := e.st.ProjectAudit(ctx, "website-v2")
	must(t, err)
	found := false
	for _, en := range entries {
		if en.Action == "token_revoked" && en.TaskID == tk.ID && en.Actor == "alice/writer" && en.Via == runnerapi.ViaRunner && strings.Contains(en.Detail, ended.RunID) {
			found = true
		}
	}
	if !found {
		t.Errorf("no audit entry of the ended run %s: %+v", ended.RunID, entries)
	}
}

// TestOwnerDecidesWhileNoRunnerPolls: the Step Decided wake-up waits in the
// table and is claimed an hour later, resuming the step's run.
func TestOwnerDecidesWhileNoRunnerPolls(t *testing.T) {
	e := newEnv(t, true)
	tk := e.routed("tsk_decided1")
	routed := e.claim(e.alice, `{"wait_seconds":0}`)
	if len(routed) != 1 || e.ack(e.alice, routed[0]) != http.StatusNoContent {
		t.Fatalf("routed wake-up: %+v", routed)
	}
	s := step.Step{ID: "stp_1", TaskID: tk.ID, Project: tk.Project, Agent: "alice/writer", RunID: routed[0].Delivery.RunID, ToolName: "Bash", Status: step.Approved}
	must(t, e.waker.Handle(context.Background(), event.ForStep(event.StepDecided, s, "alice", e.now())))
	e.clock.advance(time.Hour) // no runner is polling meanwhile
	got := e.claim(e.alice, `{"wait_seconds":0,"max":10}`)
	if len(got) != 1 || got[0].Delivery.Reason != wakeup.ReasonStepDecided || got[0].Delivery.ResumesRun != routed[0].Delivery.RunID || got[0].Delivery.TaskID != tk.ID {
		t.Fatalf("claim after the decision = %+v", got)
	}
	if c := e.checkRunToken(got[0], "alice/writer"); c.ResumesRun != routed[0].Delivery.RunID {
		t.Errorf("the run token does not resume the run that asked: %+v", c)
	}
}

// TestALongPollAnswersWhenAWakeupArrives: a claim waiting with nothing
// pending gets the wake-up stored while it waits.
func TestALongPollAnswersWhenAWakeupArrives(t *testing.T) {
	e := newEnv(t, false)
	done := make(chan []runnerapi.Wakeup)
	go func() { done <- e.claim(e.alice, `{"wait_seconds":20}`) }()
	time.Sleep(300 * time.Millisecond)
	tk := e.routed("tsk_longpoll")
	got := <-done
	if len(got) != 1 || got[0].Delivery.TaskID != tk.ID {
		t.Fatalf("long poll answered %+v, want the wake-up of %s", got, tk.ID)
	}
	if empty := e.claim(e.alice, `{"wait_seconds":1}`); len(empty) != 0 {
		t.Errorf("a poll with nothing pending answered %+v", empty)
	}
}

// TestAClaimedRunTokenSaysItsWakeup: the run token minted at a claim is in
// the project's audit trail as minted by Prickle for that wake-up (not by
// an operator at the admin CLI), with the claimer and the reason.
func TestAClaimedRunTokenSaysItsWakeup(t *testing.T) {
	e := newEnv(t, true)
	tk := e.routed("tsk_audit01")
	got := e.claim(e.alice, `{"wait_seconds":0}`)
	if len(got) != 1 {
		t.Fatalf("claimed %+v, want the one wake-up", got)
	}
	entries, err := e.st.ProjectAudit(context.Background(), "website-v2")
	must(t, err)
	var minted []audit.Entry
	for _, en := range entries {
		if en.Action == audit.TokenMinted && en.TaskID == tk.ID {
			minted = append(minted, en)
		}
	}
	if len(minted) != 1 {
		t.Fatalf("token_minted entries of %s: %+v, want 1", tk.ID, minted)
	}
	m := minted[0]
	if m.Actor != task.System || m.Via != "wake-up "+got[0].ID || !strings.Contains(m.Detail, "run "+got[0].Delivery.RunID) ||
		!strings.Contains(m.Detail, "claimed by a runner of alice/writer for "+wakeup.ReasonTaskRouted) {
		t.Errorf("the claim's run token is recorded as %q via %q: %q; want %q via %q, naming the claim", m.Actor, m.Via, m.Detail, task.System, "wake-up "+got[0].ID)
	}
}

// TestAClosedTaskStartsNoRun: a wake-up whose task closed before it was
// claimed (stored cancelled, routed event delivered late) is dropped at
// claim time, not handed out, and does not come back.
func TestAClosedTaskStartsNoRun(t *testing.T) {
	e := newEnv(t, true)
	ctx := context.Background()
	at := e.now()
	tk := task.Task{ID: "tsk_closed01", Project: "website-v2", State: task.Cancelled, Requester: "bob/reviewer", Assignee: "alice/writer",
		Packet:    task.Packet{Task: "x", DeliverableType: "doc", AcceptanceCriteria: []string{"y"}, Files: []string{}, DependsOn: []string{}},
		CreatedAt: at, UpdatedAt: at, Version: 1}
	must(t, e.st.CreateTask(ctx, tk, task.Event{At: at, By: "bob/reviewer", Action: "hand_off", To: task.Cancelled}))
	routed := tk
	routed.State = task.Routed
	must(t, e.waker.Handle(ctx, event.ForTask(event.TaskRouted, routed, "bob/reviewer", at)))
	if got := e.claim(e.alice, `{"wait_seconds":0}`); len(got) != 0 {
		t.Fatalf("claimed a wake-up of a cancelled task: %+v", got)
	}
	e.clock.advance(2 * wakeup.DefaultVisibility)
	if got := e.claim(e.alice, `{"wait_seconds":0}`); len(got) != 0 {
		t.Fatalf("a wake-up of a cancelled task came back: %+v", got)
	}
	if n := strings.Count(e.logged.String(), "wake-up has no run to start"); n != 1 {
		t.Errorf("dropped %d times, want once", n)
	}
}

// TestAttacks: every way in without the right agent token, or with a bad
// body, is refused before anything is claimed, and nothing of alice's is
// seen or acknowledged by bob.
func TestAttacks(t *testing.T) {
	e := newEnv(t, false)
	ctx := context.Background()
	tk := e.routed("tsk_attack01")
	revoked, err := e.adm.MintAgentToken(ctx, "bob/reviewer")
	must(t, err)
	run, err := e.adm.StartRun(ctx, mint.ByOperator, "alice/writer", tk.ID, "")
	must(t, err)
	must(t, e.adm.CreateProject(ctx, team.Project{Slug: "mobile-app", Name: "Mobile app"}))
	// bob's token revoked: mint a fresh one for bob afterwards.
	_, err = e.adm.RevokeAgentTokens(ctx, "bob/reviewer")
	must(t, err)
	e.bob, err = e.adm.MintAgentToken(ctx, "bob/reviewer")
	must(t, err)

	if got := e.claim(e.bob, `{"wait_seconds":0,"max":10}`); len(got) != 0 {
		t.Fatalf("bob claimed alice's wake-ups: %+v", got)
	}
	alices := e.claim(e.alice, `{"wait_seconds":0}`)
	if len(alices) != 1 {
		t.Fatalf("alice's claim = %+v", alices)
	}
	w := alices[0]
	tests := []struct {
		name, method, path, token, body string
		code                            int
	}{
		{"no token", "POST", runnerapi.ClaimPath, "", `{}`, 401},
		{"unknown token", "POST", runnerapi.ClaimPath, "prk_a_notarealtoken", `{}`, 401},
		{"revoked token", "POST", runnerapi.ClaimPath, revoked, `{}`, 401},
		{"run token", "POST", runnerapi.ClaimPath, run.RunToken, `{}`, 401},
		{"run token on ack", "POST", runnerapi.AckPath, run.RunToken, fmt.Sprintf(`{"id":%q,"claim":%q}`, w.ID, w.Claim), 401},
		{"run token on extend", "POST", runnerapi.ExtendPath, run.RunToken, fmt.Sprintf(`{"id":%q,"claim":%q}`, w.ID, w.Claim), 401},
		{"agent token on ended", "POST", runnerapi.EndedPath, e.alice, ``, 401},
		{"no token on ended", "POST", runnerapi.EndedPath, "", ``, 401},
		{"another agent's wake-up on extend", "POST", runnerapi.ExtendPath, e.bob, fmt.Sprintf(`{"id":%q,"claim":%q}`, w.ID, w.Claim), 404},
		{"huge token", "POST", runnerapi.ClaimPath, strings.Repeat("a", 10000), `{}`, 401},
		{"another agent's wake-up on ack", "POST", runnerapi.AckPath, e.bob, fmt.Sprintf(`{"id":%q,"claim":%q}`, w.ID, w.Claim), 404},
		{"wrong claim", "POST", runnerapi.AckPath, e.alice, fmt.Sprintf(`{"id":%q,"claim":"wkc_guessed"}`, w.ID), 409},
		{"unknown id", "POST", runnerapi.AckPath, e.alice, `{"id":"wk_0000000000000_0123456789abcdef","claim":"wkc_x"}`, 404},
		{"malformed id", "POST", runnerapi.AckPath, e.alice, `{"id":"../../TOKEN#x","claim":"wkc_x"}`, 400},
		{"no claim", "POST", runnerapi.AckPath, e.alice, fmt.Sprintf(`{"id":%q}`, w.ID), 400},
		{"oversized claim", "POST", runnerapi.AckPath, e.alice, fmt.Sprintf(`{"id":%q,"claim":%q}`, w.ID, strings.Repeat("c", 65)), 400},
		{"oversized body", "POST", runnerapi.ClaimPath, e.alice, `{"wait_seconds":0,"pad":"` + strings.Repeat("x", 5000) + `"}`, 413},
		{"ack not JSON", "POST", runnerapi.AckPath, e.alice, `id=1`, 400},
		{"claim not JSON", "POST", runnerapi.ClaimPath, e.alice, `{"wait_seconds":`, 400},
		{"wait_seconds over 25", "POST", runnerapi.ClaimPath, e.alice, `{"wait_seconds":26}`, 400},
		{"wait_seconds negative", "POST", runnerapi.ClaimPath, e.alice, `{"wait_seconds":-1}`, 400},
		{"wait_seconds a string", "POST", runnerapi.ClaimPath, e.alice, `{"wait_seconds":"5"}`, 400},
		{"max 0", "POST", runnerapi.ClaimPath, e.alice, `{"wait_seconds":0,"max":0}`, 400},
		{"max 11", "POST", runnerapi.ClaimPath, e.alice, `{"wait_seconds":0,"max":11}`, 400},
		{"GET claim", "GET", runnerapi.ClaimPath, e.alice, ``, 405},
		{"PUT ack", "PUT", runnerapi.AckPath, e.alice, `{}`, 405},
		{"unknown path", "POST", "/runner/release", e.alice, `{}`, 404},
		{"agent token on project", "POST", runnerapi.ProjectPath, e.alice, `{"project":"website-v2"}`, 401},
		{"no token on project", "POST", runnerapi.ProjectPath, "", `{"project":"website-v2"}`, 401},
		{"a project the run's agent is not in", "POST", runnerapi.ProjectPath, run.RunToken, `{"project":"mobile-app"}`, 404},
		{"a project that does not exist", "POST", runnerapi.ProjectPath, run.RunToken, `{"project":"nowhere"}`, 404},
		{"project not JSON", "POST", runnerapi.ProjectPath, run.RunToken, `project=website-v2`, 400},
		{"no project", "POST", runnerapi.ProjectPath, run.RunToken, `{}`, 400},
		{"oversized project", "POST", runnerapi.ProjectPath, run.RunToken, `{"project":"` + strings.Repeat("p", 65) + `"}`, 400},
		{"GET project", "GET", runnerapi.ProjectPath, run.RunToken, ``, 405},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, e.srv.URL+tt.path, strings.NewReader(tt.body))
			must(t, err)
			if tt.token != "" {
				req.Header.Set("Authorization", "Bearer "+tt.token)
			}
			resp, err := http.DefaultClient.Do(req)
			must(t, err)
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.code {
				t.Fatalf("%s %s = %d %s, want %d", tt.method, tt.path, resp.StatusCode, b, tt.code)
			}
			var msg struct {
				Error string `json:"error"`
			}
			if json.Unmarshal(b, &msg) != nil || msg.Error == "" {
				t.Errorf("answer %s carries no error message", b)
			}
		})
	}
	// None of that acknowledged alice's wake-up: her own claim still does.
	if code := e.ack(e.alice, w); code != http.StatusNoContent {
		t.Errorf("alice's ack after the attacks = %d, want 204", code)
	}
	// One JSON line per request, never a token.
	for _, secret := range []string{e.alice, e.bob, revoked, run.RunToken, w.Claim} {
		if strings.Contains(e.logged.String(), secret) {
			t.Errorf("the log carries a secret: %s…", secret[:10])
		}
	}
	for _, l := range strings.Split(strings.TrimSpace(e.logged.String()), "\n") {
		var line map[string]any
		if err := json.Unmarshal([]byte(l), &line); err != nil {
			t.Fatalf("log line is not JSON: %s", l)
		}
		if line["msg"] == "runner request" {
			for _, k := range []string{"caller", "outcome", "latency_ms", "claimed", "status"} {
				if _, ok := line[k]; !ok {
					t.Errorf("log line without %s: %s", k, l)
				}
			}
		}
	}
}
