//go:build integration

package store_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/domain/audit"
	"github.com/useprickle/prickle/shared/domain/budget"
	"github.com/useprickle/prickle/shared/domain/event"
	"github.com/useprickle/prickle/shared/domain/modelspend"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/domain/wakeup"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/teamtest"
)

// published keeps what the service hands to the bus; fail makes the next publish fail.
type published struct {
	mu     sync.Mutex
	events []event.Event
	fail   bool
}

func (p *published) Publish(_ context.Context, evs ...event.Event) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fail {
		p.fail = false
		return errors.New("the bus is down")
	}
	p.events = append(p.events, evs...)
	return nil
}

func (p *published) all() []event.Event {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]event.Event(nil), p.events...)
}

type spendFixture struct {
	fixture
	svc    *team.ModelSpend
	events *published
	clock  *time.Time
	task   task.Task
}

// newSpendFixture: alice/writer in web (and docs), working on a task bob handed her, at 10:00 UTC.
func newSpendFixture(t *testing.T) spendFixture {
	t.Helper()
	f := newFixture(t)
	ctx := context.Background()
	for _, p := range []string{"web", "docs"} {
		if err := f.store.PutProject(ctx, team.Project{Slug: p, Name: p}); err != nil {
			t.Fatal(err)
		}
	}
	for _, a := range []team.Agent{{ID: "alice/writer", Owner: "alice", Projects: []string{"web", "docs"}}, {ID: "bob/reviewer", Owner: "bob", Projects: []string{"web"}}} {
		if err := f.store.PutOwner(ctx, team.Owner{Name: a.Owner}); err != nil {
			t.Fatal(err)
		}
		if err := f.store.PutAgent(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	tk := teamtest.RoutedTask("spend-task", "web", "bob/reviewer", "alice/writer", base)
	mustCreate(t, f, tk)
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	sf := spendFixture{fixture: f, events: &published{}, clock: &now, task: tk}
	sf.svc = team.NewModelSpend(f.store, sf.events, nil)
	sf.svc.Now = func() time.Time { return *sf.clock }
	return sf
}

func runOf(taskID, runID string) identity.Caller {
	return identity.Caller{Agent: "alice/writer", Owner: "alice", Kind: identity.KindRun, TaskID: taskID, RunID: runID}
}

func usd(v float64) budget.Micros {
	m, _ := budget.FromUnits(v)
	return m
}

func (f spendFixture) spend(t *testing.T, agent string) modelspend.AgentSpend {
	t.Helper()
	a, err := f.svc.Spend(context.Background(), agent)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// A run reported twice (a retry, or two at once) counts once: one run
// item, one ADD to its day and month, one audit line.
func TestARunReportedTwiceCountsOnce(t *testing.T) {
	f := newSpendFixture(t)
	ctx := context.Background()
	report := modelspend.Report{CostUSD: 0.0123, InputTokens: 1200, OutputTokens: 300, Turns: 5, DurationMS: 8656, Model: "claude-opus-5-5"}
	var wg sync.WaitGroup
	recorded := make([]bool, 4)
	for i := range recorded {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := f.svc.Record(ctx, runOf(f.task.ID, "run_a"), report)
			if err != nil {
				t.Error(err)
			}
			recorded[i] = ok
		}()
	}
	wg.Wait()
	n := 0
	for _, ok := range recorded {
		if ok {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("recorded %d times of 4, want once", n)
	}
	*f.clock = f.clock.Add(time.Hour) // a late retry
	if ok, err := f.svc.Record(ctx, runOf(f.task.ID, "run_a"), modelspend.Report{CostUSD: 999}); ok || err != nil {
		t.Fatalf("a replayed report = %v, %v; want not recorded, no error", ok, err)
	}
	a := f.spend(t, "alice/writer")
	if a.Today.Cost != usd(0.0123) || a.Today.InputTokens != 1200 || a.Today.OutputTokens != 300 || a.Today.Runs != 1 || a.Month != a.Today.Totals {
		t.Errorf("counted = today %+v, month %+v", a.Today.Totals, a.Month)
	}
	runs, err := f.store.TaskRuns(ctx, f.task.ID)
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs = %+v, %v", runs, err)
	}
	if r := runs[0]; r.Agent != "alice/writer" || r.Project != "web" || r.RunID != "run_a" || r.Cost != usd(0.0123) || r.Model != "claude-opus-5-5" || r.Turns != 5 || r.DurationMS != 8656 {
		t.Errorf("run = %+v", r)
	}
	entries, err := f.store.ProjectAudit(ctx, "web")
	if err != nil {
		t.Fatal(err)
	}
	var lines []audit.Entry
	for _, e := range entries {
		if e.Action == audit.RunSpend {
			lines = append(lines, e)
		}
	}
	if len(lines) != 1 || lines[0].TaskID != f.task.ID || lines[0].Actor != "alice/writer" || !strings.Contains(lines[0].Detail, "run run_a: 0.0123 USD") {
		t.Errorf("audit lines of the run's spend = %+v", lines)
	}
}

// A day's and a month's counters add up every run of the agent, whatever
// its task; a new UTC day starts at zero, the month goes on.
func TestCountersAddUpByDayAndMonth(t *testing.T) {
	f := newSpendFixture(t)
	ctx := context.Background()
	for i, cost := range []float64{0.1, 0.2, 0.3} {
		if _, err := f.svc.Record(ctx, runOf(f.task.ID, "run_"+string(rune('a'+i))), modelspend.Report{CostUSD: cost, InputTokens: 10, OutputTokens: 1}); err != nil {
			t.Fatal(err)
		}
	}
	a := f.spend(t, "alice/writer")
	if a.Today.Cost != usd(0.6) || a.Today.Runs != 3 || a.Today.InputTokens != 30 {
		t.Errorf("today = %+v, want 0.6 USD exactly over 3 runs", a.Today.Totals)
	}
	*f.clock = f.clock.Add(24 * time.Hour)
	if _, err := f.svc.Record(ctx, runOf(f.task.ID, "run_d"), modelspend.Report{CostUSD: 1}); err != nil {
		t.Fatal(err)
	}
	a = f.spend(t, "alice/writer")
	if a.Today.Day != "2026-12-02" || a.Today.Cost != usd(1) || a.Month.Cost != usd(1.6) || a.Month.Runs != 4 {
		t.Errorf("next day = %+v, month %+v", a.Today, a.Month)
	}
	if b := f.spend(t, "bob/reviewer"); b.Today.Runs != 0 || b.Cap != nil {
		t.Errorf("bob counted alice's runs: %+v", b)
	}
	// The day's item expires after the day (ttl), the month's after the month.
	out, err := f.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(f.tables.Tasks), Key: map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "MODELSPEND#alice/writer"}, "sk": &types.AttributeValueMemberS{Value: "DAY#2026-12-02"}}})
	if err != nil || out.Item["ttl"] == nil {
		t.Fatalf("day item has no ttl: %v %v", out.Item, err)
	}
}

// The cap: reached, the owner is asked once a day however many checks and
// reports race; raising it gives another cap's worth for the day; a day is
// decided once, by its owner only.
func TestTheCapAsksOnceAndIsDecidedOnce(t *testing.T) {
	f := newSpendFixture(t)
	ctx := context.Background()
	if err := f.svc.SetCap(ctx, "bob", "web", "alice/writer", usd(20), audit.ViaOwners); err == nil {
		t.Fatal("bob set a cap on alice's agent")
	}
	if err := f.svc.SetCap(ctx, "alice", "mobile", "alice/writer", usd(20), audit.ViaOwners); err == nil {
		t.Fatal("a cap was set in a project the agent is not in")
	}
	if err := f.svc.SetCap(ctx, "alice", "web", "alice/writer", usd(20), audit.ViaOwners); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Record(ctx, runOf(f.task.ID, "run_a"), modelspend.Report{CostUSD: 19.99}); err != nil {
		t.Fatal(err)
	}
	if st, _ := f.svc.Gate(ctx, "alice/writer"); st.Over || len(f.events.all()) != 0 {
		t.Fatalf("under the cap: %+v, asked %d", st, len(f.events.all()))
	}
	if _, err := f.svc.Record(ctx, runOf(f.task.ID, "run_b"), modelspend.Report{CostUSD: 1.31}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if st, err := f.svc.Gate(ctx, "alice/writer"); err != nil || !st.Over {
				t.Errorf("over the cap: %+v, %v", st, err)
			}
		}()
	}
	wg.Wait()
	asked := f.events.all()
	if len(asked) != 1 || asked[0].Type != event.ModelCapReached || asked[0].ID != "Model Cap Reached:alice/writer:2026-12-01" {
		t.Fatalf("asks = %+v, want one Model Cap Reached", asked)
	}
	if c := asked[0].Cap; c.Owner != "alice" || c.Spent != usd(21.3) || c.Limit != usd(20) || c.Raise != usd(41.3) {
		t.Errorf("the ask = %+v", c)
	}

	*f.clock = f.clock.Add(time.Minute)
	if _, err := f.svc.Decide(ctx, "bob", "alice/writer", "2026-12-01", true, audit.ViaLink); err == nil {
		t.Fatal("bob decided alice's cap")
	}
	if _, err := f.svc.Decide(ctx, "alice", "alice/writer", "2026-11-30", true, audit.ViaLink); err == nil {
		t.Fatal("yesterday's link raised today's cap")
	}
	st, err := f.svc.Decide(ctx, "alice", "alice/writer", "2026-12-01", true, audit.ViaLink)
	if err != nil || st.Over || st.Limit != usd(41.3) {
		t.Fatalf("raise = %+v, %v", st, err)
	}
	var refusal *task.Refusal
	if _, err := f.svc.Decide(ctx, "alice", "alice/writer", "2026-12-01", false, audit.ViaSlack); !errors.As(err, &refusal) || !strings.Contains(refusal.Msg, "already decided by alice") {
		t.Fatalf("second decision = %v, want refused as already decided", err)
	}
	if g, _ := f.svc.Gate(ctx, "alice/writer"); g.Over || g.Limit != usd(41.3) {
		t.Errorf("after the raise: %+v", g)
	}
	// Over the raised cap the same day: held again, not asked again (once a day).
	if _, err := f.svc.Record(ctx, runOf(f.task.ID, "run_c"), modelspend.Report{CostUSD: 20}); err != nil {
		t.Fatal(err)
	}
	if g, _ := f.svc.Gate(ctx, "alice/writer"); !g.Over || len(f.events.all()) != 1 {
		t.Errorf("over the raised cap: %+v, asked %d times", g, len(f.events.all()))
	}
	// The next UTC day starts under the cap.
	*f.clock = time.Date(2026, 12, 2, 0, 0, 1, 0, time.UTC)
	if g, _ := f.svc.Gate(ctx, "alice/writer"); g.Over || g.Limit != usd(20) {
		t.Errorf("the next day: %+v", g)
	}
	entries, err := f.store.ProjectAudit(ctx, "docs")
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, e := range entries {
		actions = append(actions, e.Action+" "+e.Actor+" "+e.Via)
	}
	if want := []string{"model_cap_set owner:alice owners page", "model_cap_raised owner:alice approval link"}; strings.Join(actions, "|") != strings.Join(want, "|") {
		t.Errorf("the agent's other project's trail = %q, want %q", actions, want)
	}
	// Removing the cap lets the agent run whatever it spent.
	if err := f.svc.SetCap(ctx, "alice", "web", "alice/writer", 0, audit.ViaOwners); err != nil {
		t.Fatal(err)
	}
	if a := f.spend(t, "alice/writer"); a.Cap != nil || a.Status().Over {
		t.Errorf("no cap: %+v", a)
	}
}

// An ask the bus did not take is taken back, so the next check asks again.
func TestAnAskNotPublishedIsAskedAgain(t *testing.T) {
	f := newSpendFixture(t)
	ctx := context.Background()
	if err := f.svc.SetCap(ctx, "alice", "web", "alice/writer", usd(1), audit.ViaOwners); err != nil {
		t.Fatal(err)
	}
	f.events.fail = true
	if _, err := f.svc.Record(ctx, runOf(f.task.ID, "run_a"), modelspend.Report{CostUSD: 2}); err != nil {
		t.Fatalf("a report whose ask failed is still recorded: %v", err)
	}
	if len(f.events.all()) != 0 {
		t.Fatal("published despite the failure")
	}
	if _, err := f.svc.Gate(ctx, "alice/writer"); err != nil {
		t.Fatal(err)
	}
	if got := f.events.all(); len(got) != 1 || got[0].Type != event.ModelCapReached {
		t.Errorf("asked again: %+v", got)
	}
}

// Wake-ups held back by a cap outlive the day they wait for: their ttl
// moves to the hold's end, once; an acknowledged one is left as it is.
func TestHeldWakeupsOutliveTheDay(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	at := time.Date(2026, 12, 1, 0, 30, 0, 0, time.UTC)
	ids := []string{}
	for i, ev := range []string{"ev1", "ev2"} {
		p := wakeup.Pending{ID: wakeup.PendingID(ev, "alice/writer", at.Add(time.Duration(i)*time.Second)), Agent: "alice/writer", TaskID: "tsk_" + ev, Reason: "task_routed", EventID: ev, CreatedAt: at.Add(time.Duration(i) * time.Second)}
		if err := f.store.PutPendingWakeup(ctx, p); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.ID)
	}
	won, _, err := f.store.ClaimWakeup(ctx, "alice/writer", ids[1], "claim-hash", at.Add(time.Minute), at.Add(2*time.Minute))
	if err != nil || !won {
		t.Fatal(won, err)
	}
	if err := f.store.AckWakeup(ctx, "alice/writer", ids[1], "claim-hash", at); err != nil {
		t.Fatal(err)
	}
	until := modelspend.NextDay(at).Add(wakeup.PendingRetention)
	moved, err := f.store.HoldWakeups(ctx, "alice/writer", at, until)
	if err != nil || moved != 1 {
		t.Fatalf("held = %d, %v; want the one waiting", moved, err)
	}
	if moved, err := f.store.HoldWakeups(ctx, "alice/writer", at, until); err != nil || moved != 0 {
		t.Errorf("held again = %d, %v; want nothing to move", moved, err)
	}
	// Still claimable after its first day: a day and a half later.
	later := at.Add(36 * time.Hour)
	got, err := f.store.ClaimableWakeups(ctx, "alice/writer", later, 10)
	if err != nil || len(got) != 1 || got[0].ID != ids[0] {
		t.Errorf("claimable the next day = %+v, %v", got, err)
	}
}
