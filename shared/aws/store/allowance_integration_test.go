//go:build integration

package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/aws/bus"
	"github.com/useprickle/prickle/shared/domain/audit"
	"github.com/useprickle/prickle/shared/domain/budget"
	"github.com/useprickle/prickle/shared/domain/event"
	"github.com/useprickle/prickle/shared/domain/grant"
	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/teamtest"
)

// ownersFixture is the team service over the real store with one project,
// alice's builder working on a task as a woken run, and bob's reviewer.
type ownersFixture struct {
	fixture
	svc  *team.Service
	run  identity.Caller
	task task.Task
}

func newOwnersFixture(t *testing.T) ownersFixture {
	t.Helper()
	return ownersOn(t, newFixture(t))
}

// ownersOn sets the owners fixture up on f's store.
func ownersOn(t *testing.T, f fixture) ownersFixture {
	t.Helper()
	ctx := context.Background()
	if err := f.store.PutProject(ctx, team.Project{Slug: "web", Name: "Web", StepDeadline: step.DefaultPendingDeadline}); err != nil {
		t.Fatal(err)
	}
	for _, a := range []string{"alice/builder", "bob/reviewer"} {
		owner, _, _ := strings.Cut(a, "/")
		if err := f.store.PutOwner(ctx, team.Owner{Name: owner}); err != nil {
			t.Fatal(err)
		}
		if err := f.store.PutAgent(ctx, team.Agent{ID: a, Owner: owner, Projects: []string{"web"}}); err != nil {
			t.Fatal(err)
		}
	}
	tk := teamtest.RoutedTask("push-task", "web", "bob/reviewer", "alice/builder", base)
	mustCreate(t, f, tk)
	m, _ := task.Accept(tk, "alice/builder", "", base.Add(time.Minute))
	if err := f.store.ApplyMove(ctx, 1, m); err != nil {
		t.Fatal(err)
	}
	svc := team.New(f.store)
	n := 0
	var mu sync.Mutex
	svc.NewID = func(prefix string) string {
		mu.Lock()
		defer mu.Unlock()
		n++
		return fmt.Sprintf("%s%04d", prefix, n)
	}
	return ownersFixture{fixture: f, svc: svc, task: m.Task,
		run: identity.Caller{Agent: "alice/builder", Owner: "alice", Kind: identity.KindRun, TaskID: tk.ID, RunID: "run_1"}}
}

// spent is what alice/builder spent today in USD.
func (f ownersFixture) spent(t *testing.T) budget.Micros {
	t.Helper()
	m, err := f.store.Spent(context.Background(), budget.Spend{Project: "web", Owner: "alice", Unit: "USD", Agent: "alice/builder", Day: budget.Day(time.Now())})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func (f ownersFixture) push(t *testing.T, branch, toolUseID string) team.RequestStepOutput {
	t.Helper()
	out, err := f.svc.RequestStep(context.Background(), f.run, team.RequestStepInput{
		ToolName: "Bash", Input: json.RawMessage(fmt.Sprintf(`{"command":"git push origin %s","description":"push"}`, branch)),
		ToolUseID: toolUseID, Kind: "outbound", Target: "github.com",
	})
	if err != nil {
		t.Fatalf("request_step push %s: %v", branch, err)
	}
	return out
}

// TestGrantSparesRepeatedAsksUntilRevoked: a
// run that pushes the same branch five times is asked once; a pattern grant
// allows the pushes; a near miss still asks; revoking makes the next push ask.
func TestGrantSparesRepeatedAsksUntilRevoked(t *testing.T) {
	f := newOwnersFixture(t)
	ctx := context.Background()
	first := f.push(t, "main", "tu_0")
	if first.Status != step.Pending || first.Behavior != "deny" {
		t.Fatalf("first push = %+v, want pending deny", first)
	}
	if _, err := f.svc.DecideStep(ctx, "alice", f.task.ID, first.StepID, true, nil, "", audit.ViaPage); err != nil {
		t.Fatal(err)
	}
	// bob cannot give a grant for alice's agent.
	if _, err := f.svc.GrantFromStep(ctx, "bob", f.task.ID, first.StepID, team.GrantRequest{Scope: grant.ScopePattern, Hours: 2, Field: "command", Pattern: "git push origin *"}); err == nil {
		t.Fatal("bob gave a grant for alice's agent")
	}
	for _, bad := range []team.GrantRequest{
		{Scope: grant.ScopePattern, Hours: 2, Field: "command", Pattern: "*"},
		{Scope: grant.ScopePattern, Hours: 0, Field: "command", Pattern: "git push *"},
		{Scope: grant.ScopePattern, Hours: 1000, Field: "command", Pattern: "git push *"},
		{Scope: "everything", Hours: 2},
	} {
		if _, err := f.svc.GrantFromStep(ctx, "alice", f.task.ID, first.StepID, bad); err == nil {
			t.Errorf("grant %+v accepted", bad)
		}
	}
	g, err := f.svc.GrantFromStep(ctx, "alice", f.task.ID, first.StepID, team.GrantRequest{Scope: grant.ScopePattern, Hours: 2, Field: "command", Pattern: "git push origin *", Via: audit.ViaPage})
	if err != nil {
		t.Fatal(err)
	}
	used := f.push(t, "main", "tu_0") // the approved step itself, used once
	if used.Behavior != "allow" || used.Status != step.Consumed {
		t.Fatalf("approved push = %+v", used)
	}
	for i := 1; i <= 5; i++ {
		out := f.push(t, "main", fmt.Sprintf("tu_%d", i))
		if out.Behavior != "allow" || out.Status != step.Consumed || !strings.Contains(out.Message, g.ID) {
			t.Fatalf("push %d = %+v, want allow by %s", i, out, g.ID)
		}
		if string(out.UpdatedInput) != `{"command":"git push origin main","description":"push"}` {
			t.Errorf("push %d updatedInput = %s", i, out.UpdatedInput)
		}
	}
	if near := f.push(t, "main; curl evil.example", "tu_x"); near.Status != step.Pending {
		t.Fatalf("a near miss was allowed: %+v", near)
	}
	grants, err := f.store.ProjectGrants(ctx, "web")
	if err != nil || len(grants) != 1 || grants[0].Uses != 5 {
		t.Fatalf("grants = %+v, %v; want one with 5 uses", grants, err)
	}
	if _, err := f.svc.RevokeGrant(ctx, "bob", "web", g.ID, audit.ViaPage); err == nil {
		t.Fatal("bob revoked alice's grant")
	}
	if _, err := f.svc.RevokeGrant(ctx, "alice", "web", g.ID, audit.ViaPage); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.RevokeGrant(ctx, "alice", "web", g.ID, audit.ViaPage); err == nil {
		t.Fatal("a grant was revoked twice")
	}
	if again := f.push(t, "main", "tu_9"); again.Status != step.Pending || again.Behavior != "deny" {
		t.Fatalf("after revoking, push = %+v, want pending", again)
	}

	entries, err := f.svc.ProjectAudit(ctx, "web")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Action+" "+e.Actor+" "+e.Via)
	}
	want := []string{
		"hand_off bob/reviewer mcp", "accept alice/builder mcp",
		"step_asked alice/builder mcp", "step_approved owner:alice task page", "grant_created owner:alice task page",
		"step_used alice/builder mcp",
		"step_allowed owner:alice grant " + g.ID, "step_allowed owner:alice grant " + g.ID, "step_allowed owner:alice grant " + g.ID,
		"step_allowed owner:alice grant " + g.ID, "step_allowed owner:alice grant " + g.ID,
		"step_asked alice/builder mcp", "grant_revoked owner:alice task page",
		"step_withdrawn alice/builder mcp", "step_asked alice/builder mcp",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("audit:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestExactCallGrant allows only the same call on the same task, and expires.
func TestExactCallGrant(t *testing.T) {
	f := newOwnersFixture(t)
	ctx := context.Background()
	now := base.Add(time.Hour)
	f.svc.Now = func() time.Time { return now }
	first := f.push(t, "main", "tu_0")
	if _, err := f.svc.DecideStep(ctx, "alice", f.task.ID, first.StepID, true, nil, "", audit.ViaLink); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.GrantFromStep(ctx, "alice", f.task.ID, first.StepID, team.GrantRequest{Scope: grant.ScopeCall, Hours: 1, Via: audit.ViaLink}); err != nil {
		t.Fatal(err)
	}
	f.push(t, "main", "tu_0")
	if out := f.push(t, "main", "tu_1"); out.Behavior != "allow" {
		t.Fatalf("same call = %+v, want allow", out)
	}
	if out := f.push(t, "release", "tu_2"); out.Status != step.Pending {
		t.Fatalf("another branch = %+v, want pending", out)
	}
	now = now.Add(61 * time.Minute)
	if out := f.push(t, "main", "tu_3"); out.Status != step.Pending {
		t.Fatalf("after the grant expired = %+v, want pending", out)
	}
}

// TestRacingGrantUses counts every racing use exactly once.
func TestRacingGrantUses(t *testing.T) {
	f := newOwnersFixture(t)
	ctx := context.Background()
	first := f.push(t, "main", "tu_0")
	if _, err := f.svc.DecideStep(ctx, "alice", f.task.ID, first.StepID, true, nil, "", audit.ViaPage); err != nil {
		t.Fatal(err)
	}
	g, err := f.svc.GrantFromStep(ctx, "alice", f.task.ID, first.StepID, team.GrantRequest{Scope: grant.ScopePattern, Hours: 1, Field: "command", Pattern: "git push origin *"})
	if err != nil {
		t.Fatal(err)
	}
	const n = 12
	var wg sync.WaitGroup
	allowed := make([]bool, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := f.svc.RequestStep(ctx, f.run, team.RequestStepInput{ToolName: "Bash",
				Input: json.RawMessage(fmt.Sprintf(`{"command":"git push origin b%d"}`, i)), ToolUseID: fmt.Sprintf("tu_%d", i)})
			allowed[i] = err == nil && out.Behavior == "allow"
		}()
	}
	wg.Wait()
	count := 0
	for _, a := range allowed {
		if a {
			count++
		}
	}
	grants, err := f.store.ProjectGrants(ctx, "web")
	if err != nil {
		t.Fatal(err)
	}
	if count != n || grants[0].Uses != n || grants[0].ID != g.ID {
		t.Fatalf("%d of %d racing pushes allowed, grant uses %d; want all and %d", count, n, grants[0].Uses, n)
	}
}

// TestRacingSpendingNeverOverspends: 20 racing
// spending steps of 5 USD against a 50 USD budget allow at most 50 USD. Each
// racer is answered as the seed says, with no tool error: allowed, or denied
// "still waiting" while the owner is asked once, about the one step that
// waits, with what is left.
func TestRacingSpendingNeverOverspends(t *testing.T) {
	f := newOwnersFixture(t)
	ctx := context.Background()
	events := &bus.Recorder{}
	f.svc.Events = events
	if _, err := f.svc.SetBudget(ctx, budget.Budget{Project: "web", Owner: "alice", Unit: "USD", PerAgentPerDay: 50 * budget.Scale, AutoAllow: true, AmountField: "usd"}, audit.ViaPage); err != nil {
		t.Fatal(err)
	}
	const n = 20
	type answer struct {
		out team.RequestStepOutput
		err error
	}
	answers := make([]answer, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := f.svc.RequestStep(ctx, f.run, team.RequestStepInput{ToolName: "buy_credits",
				Input: json.RawMessage(fmt.Sprintf(`{"pack":%d,"usd":5}`, i)), ToolUseID: fmt.Sprintf("tu_%d", i),
				Kind: "spending", Amount: &step.Amount{Value: 5, Unit: "USD"}})
			answers[i] = answer{out, err}
		}()
	}
	wg.Wait()
	allowed, waiting := 0, 0
	var pendingIDs []string
	for i, a := range answers {
		switch {
		case a.err != nil:
			t.Errorf("answer %d is a tool error: %v", i, a.err)
		case a.out.Behavior == "allow" && a.out.Status == step.Consumed:
			allowed++
		case a.out.Behavior == "deny" && strings.HasPrefix(a.out.Message, "still waiting for your owner"):
			waiting++
			if a.out.Status == step.Pending {
				pendingIDs = append(pendingIDs, a.out.StepID)
			}
			if !strings.Contains(a.out.Message, "0 USD left of 50 USD") {
				t.Errorf("answer %d asks without saying what is left: %q", i, a.out.Message)
			}
		default:
			t.Errorf("answer %d: %+v", i, a.out)
		}
	}
	if spent := f.spent(t); allowed != 10 || waiting != 10 || spent != 50*budget.Scale {
		t.Fatalf("allowed %d, waiting %d, spent %s USD; want 10, 10 and exactly 50", allowed, waiting, spent)
	}
	// One step waits, the owner is asked once about it, and it says what is left.
	steps, err := f.store.StepsForTask(ctx, f.task.ID)
	if err != nil {
		t.Fatal(err)
	}
	var stored []string
	for _, s := range steps {
		if s.Status == step.Pending {
			stored = append(stored, s.ID)
		}
	}
	var asked []event.Event
	for _, e := range events.Events() {
		if e.Type == event.StepRequested {
			asked = append(asked, e)
		}
	}
	if len(stored) != 1 || len(pendingIDs) != 1 || pendingIDs[0] != stored[0] || len(asked) != 1 || asked[0].Step.ID != stored[0] {
		t.Fatalf("pending stored %v, answered pending %v, owner asked %d times; want one step, asked once", stored, pendingIDs, len(asked))
	}
	if !strings.Contains(asked[0].Step.BudgetNote, "0 USD left of 50 USD today for alice/builder") {
		t.Errorf("the owner's question does not say what is left: %q", asked[0].Step.BudgetNote)
	}
	for i, a := range answers {
		if a.err == nil && a.out.Behavior == "deny" && a.out.Status != step.Pending && !strings.Contains(a.out.Message, stored[0]) {
			t.Errorf("answer %d waits without naming the step the owner is asked: %+v", i, a.out)
		}
	}
	// Beyond the budget the owner is asked and told what is left.
	out, err := f.svc.RequestStep(ctx, f.run, team.RequestStepInput{ToolName: "buy_credits", Input: json.RawMessage(`{"pack":99,"usd":0.5}`),
		ToolUseID: "tu_99", Kind: "spending", Amount: &step.Amount{Value: 0.5, Unit: "USD"}})
	if err != nil || out.Status != step.Pending || !strings.Contains(out.Message, "over budget") {
		t.Fatalf("over budget = %+v, %v", out, err)
	}
	steps, err = f.store.StepsForTask(ctx, f.task.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range steps {
		if s.ID == out.StepID && !strings.Contains(s.BudgetNote, "0 USD left of 50 USD today for alice/builder") {
			t.Errorf("the asked step's note = %q", s.BudgetNote)
		}
	}
	// Another unit, or no amount, is never allowed by the USD budget.
	if out, err := f.svc.RequestStep(ctx, f.run, team.RequestStepInput{ToolName: "buy", Input: json.RawMessage(`{"usd":1}`), ToolUseID: "tu_e",
		Kind: "spending", Amount: &step.Amount{Value: 1, Unit: "EUR"}}); err != nil || out.Behavior == "allow" {
		t.Fatalf("EUR spend = %+v, %v; want asked", out, err)
	}
}

// TestZeroAmountWithinABudget: a spending step of 0 under an auto-allow
// budget, after spend is already counted, is allowed and leaves the spend as
// it was (the debit that added nothing used to come back without a total:
// JSON-RPC -32603 and no step stored).
func TestZeroAmountWithinABudget(t *testing.T) {
	f := newOwnersFixture(t)
	ctx := context.Background()
	if _, err := f.svc.SetBudget(ctx, budget.Budget{Project: "web", Owner: "alice", Unit: "USD", PerAgentPerDay: 50 * budget.Scale, AutoAllow: true, AmountField: "usd"}, audit.ViaPage); err != nil {
		t.Fatal(err)
	}
	for i, v := range []float64{5, 0, 0, 2.5} {
		out, err := f.svc.RequestStep(ctx, f.run, team.RequestStepInput{ToolName: "buy_credits", Input: json.RawMessage(fmt.Sprintf(`{"pack":%d,"usd":%v}`, i, v)),
			ToolUseID: fmt.Sprintf("tu_%d", i), Kind: "spending", Amount: &step.Amount{Value: v, Unit: "USD"}})
		if err != nil || out.Behavior != "allow" {
			t.Fatalf("spend %v: %+v, %v; want allowed by the budget", v, out, err)
		}
	}
	spent, err := f.store.Spent(ctx, budget.Spend{Project: "web", Owner: "alice", Unit: "USD", Agent: "alice/builder", Day: budget.Day(time.Now())})
	if err != nil || spent != 7_500_000 {
		t.Fatalf("spent %s, %v; want 7.5", spent, err)
	}
	if steps, _ := f.store.StepsForTask(ctx, f.task.ID); len(steps) != 4 {
		t.Fatalf("%d steps stored, want 4", len(steps))
	}
	// Spend approved by hand may pass the limit; a step of 0 still spends nothing and is allowed,
	// while any more is asked.
	key := budget.Spend{Project: "web", Owner: "alice", Unit: "USD", Agent: "alice/builder", Day: budget.Day(time.Now())}
	if _, err := f.store.AddSpend(ctx, key, 45*budget.Scale, nil); err != nil {
		t.Fatal(err)
	}
	for i, c := range []struct {
		v     float64
		allow bool
	}{{0, true}, {0.5, false}} {
		out, err := f.svc.RequestStep(ctx, f.run, team.RequestStepInput{ToolName: "buy_credits", Input: json.RawMessage(fmt.Sprintf(`{"pack":%d,"usd":%v}`, 10+i, c.v)),
			ToolUseID: fmt.Sprintf("tu_over_%d", i), Kind: "spending", Amount: &step.Amount{Value: c.v, Unit: "USD"}})
		if err != nil || (out.Behavior == "allow") != c.allow {
			t.Errorf("spend %v past the limit: %+v, %v; want allowed %v", c.v, out, err, c.allow)
		}
	}
}

func TestAuditEntriesAreAppendOnly(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	e := audit.Entry{At: base, Project: "web", Action: audit.TokenMinted, Actor: "operator", Via: audit.ViaAdmin, Detail: "first", Key: "token#abc"}
	if err := f.store.AppendAudit(ctx, e); err != nil {
		t.Fatal(err)
	}
	e.Detail = "rewritten"
	if err := f.store.AppendAudit(ctx, e); err != nil {
		t.Fatal(err)
	}
	got, err := f.store.ProjectAudit(ctx, "web")
	if err != nil || len(got) != 1 || got[0].Detail != "first" {
		t.Fatalf("audit = %+v, %v; want the first entry unchanged", got, err)
	}
	if err := f.store.AppendAudit(ctx, audit.Entry{At: base, Action: "x", Key: "k"}); err == nil {
		t.Fatal("an entry without a project was stored")
	}
}

// TestPatternGrantsAskForTheReviewedNearMisses is the security review's
// attack on pattern grants, through request_step and the emulator: a grant
// for ".../src/*" on Write's file_path and one for "git push origin *" on
// Bash's command allow what their owner meant and ask for the rest.
func TestPatternGrantsAskForTheReviewedNearMisses(t *testing.T) {
	f := newOwnersFixture(t)
	ctx := context.Background()
	n := 0
	ask := func(tool, field, value string) team.RequestStepOutput {
		t.Helper()
		n++
		in, _ := json.Marshal(map[string]string{field: value})
		out, err := f.svc.RequestStep(ctx, f.run, team.RequestStepInput{ToolName: tool, Input: in, ToolUseID: fmt.Sprintf("tu_%d", n), Kind: "destructive"})
		if err != nil {
			t.Fatalf("request_step %s %q: %v", tool, value, err)
		}
		return out
	}
	give := func(tool, field, value, pattern string) {
		t.Helper()
		first := ask(tool, field, value)
		if _, err := f.svc.DecideStep(ctx, "alice", f.task.ID, first.StepID, true, nil, "", audit.ViaPage); err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.GrantFromStep(ctx, "alice", f.task.ID, first.StepID, team.GrantRequest{Scope: grant.ScopePattern, Hours: 2, Field: field, Pattern: pattern, Via: audit.ViaPage}); err != nil {
			t.Fatal(err)
		}
	}
	const src = "/home/alice/proj/src/"
	give("Write", "file_path", src+"app.go", src+"*")
	give("Bash", "command", "git push origin main", "git push origin *")
	for _, c := range []struct {
		tool, field, value string
		allowed            bool
	}{
		{"Write", "file_path", src + "util.go", true},
		{"Write", "file_path", src + "../../home/alice/.ssh/authorized_keys", false},
		{"Write", "file_path", src + "../.github/workflows/deploy.yml", false},
		{"Bash", "command", "git push origin release", true},
		{"Bash", "command", "git push origin --receive-pack='touch /tmp/x' main", false},
		{"Bash", "command", "git push origin main --exec=/tmp/evil", false},
		{"Bash", "command", "git push origin :main", false},
		{"Bash", "command", "git push origin --delete main", false},
	} {
		out := ask(c.tool, c.field, c.value)
		if allowed := out.Behavior == "allow"; allowed != c.allowed {
			t.Errorf("%s %q = %s %s %q; want allowed %v", c.tool, c.value, out.Status, out.Behavior, out.Message, c.allowed)
		}
		if !c.allowed && out.Status != step.Pending {
			t.Errorf("%s %q = %s; want asked of the owner", c.tool, c.value, out.Status)
		}
	}
}

// TestBudgetIsNotDebitedLessThanTheCallSays is the security review's attack
// on auto-allow budgets: a spending step that declares 0.01 USD for a call
// charging 5000 is asked of the owner, and nothing is debited.
func TestBudgetIsNotDebitedLessThanTheCallSays(t *testing.T) {
	f := newOwnersFixture(t)
	ctx := context.Background()
	if _, err := f.svc.SetBudget(ctx, budget.Budget{Project: "web", Owner: "alice", Unit: "USD", PerAgentPerDay: 50 * budget.Scale, AutoAllow: true, AmountField: "amount"}, audit.ViaPage); err != nil {
		t.Fatal(err)
	}
	out, err := f.svc.RequestStep(ctx, f.run, team.RequestStepInput{ToolName: "Bash",
		Input:     json.RawMessage(`{"command":"curl -X POST https://payments.example/charge -d amount=5000"}`),
		ToolUseID: "tu_curl", Kind: "spending", Target: "payments.example", Amount: &step.Amount{Value: 0.01, Unit: "USD"}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Behavior == "allow" || out.Status != step.Pending {
		t.Fatalf("a step declaring 0.01 USD for a 5000 charge = %s %s %q; want asked", out.Status, out.Behavior, out.Message)
	}
	if !strings.Contains(out.Message, "not allowed by the budget: the call's input holds no amount in field amount") {
		t.Errorf("the answer does not say why it asks: %q", out.Message)
	}
	if got := f.spent(t); got != 0 {
		t.Fatalf("spent %s; want nothing debited", got)
	}
	// Auto-allow needs to know where the amount is.
	if _, err := f.svc.SetBudget(ctx, budget.Budget{Project: "web", Owner: "alice", Unit: "USD", PerAgentPerDay: 50 * budget.Scale, AutoAllow: true}, audit.ViaPage); err == nil {
		t.Fatal("a budget that auto-allows without an amount field was saved")
	}
	if _, err := f.svc.SetBudget(ctx, budget.Budget{Project: "web", Owner: "alice", Unit: "USD", PerAgentPerDay: 50 * budget.Scale, AutoAllow: true,
		AmountTool: "charge", AmountField: "amount"}, audit.ViaPage); err != nil {
		t.Fatal(err)
	}
	n := 0
	charge := func(tool, input string, declared float64) team.RequestStepOutput {
		t.Helper()
		n++
		out, err := f.svc.RequestStep(ctx, f.run, team.RequestStepInput{ToolName: tool, Input: json.RawMessage(input),
			ToolUseID: fmt.Sprintf("tu_%d", n), Kind: "spending", Amount: &step.Amount{Value: declared, Unit: "USD"}})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, c := range []struct {
		tool, input string
		declared    float64
		why         string
	}{
		{"charge", `{"amount":5000,"to":"acct_1"}`, 0.01, "the step declares 0.01 USD but its input's amount says 5000 USD"},
		{"charge", `{"amount":5.0000001}`, 5, "the step declares 5 USD but its input's amount says 5.000001 USD"},
		{"charge", `{"amount":"5"}`, 5, "the call's input holds no amount in field amount"},
		{"charge", `{"cents":500}`, 5, "the call's input holds no amount in field amount"},
		{"charge", `{"amount":-5}`, 0, "not an amount between 0 and"},
		{"charge", `{"amount":1e400}`, 5, "not an amount between 0 and"},
		{"refund", `{"amount":5}`, 5, "reads amounts from charge calls only, not refund"},
	} {
		out := charge(c.tool, c.input, c.declared)
		if out.Behavior == "allow" || out.Status != step.Pending || !strings.Contains(out.Message, c.why) {
			t.Errorf("%s %s declaring %v = %s %s %q; want asked, saying %q", c.tool, c.input, c.declared, out.Status, out.Behavior, out.Message, c.why)
		}
	}
	if got := f.spent(t); got != 0 {
		t.Fatalf("spent %s; want nothing debited", got)
	}
	if out := charge("charge", `{"amount":5,"to":"acct_1"}`, 5); out.Behavior != "allow" {
		t.Fatalf("a charge whose input holds the declared 5 USD = %s %q; want allowed", out.Status, out.Message)
	}
	if got := f.spent(t); got != 5*budget.Scale {
		t.Fatalf("spent %s; want 5", got)
	}
}

// TestBudgetStoredBeforeAmountFieldsAsks: a budget item stored before
// budgets named where the amount is reads back without one, and allows
// nothing without asking, saying why.
func TestBudgetStoredBeforeAmountFieldsAsks(t *testing.T) {
	f := newOwnersFixture(t)
	ctx := context.Background()
	old := map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "BUDGETS#web"}, "sk": &types.AttributeValueMemberS{Value: "alice#USD"},
		"type": &types.AttributeValueMemberS{Value: "budget"}, "budget_project": &types.AttributeValueMemberS{Value: "web"},
		"owner": &types.AttributeValueMemberS{Value: "alice"}, "unit": &types.AttributeValueMemberS{Value: "USD"},
		"per_agent_per_day": &types.AttributeValueMemberN{Value: "50000000"}, "auto_allow": &types.AttributeValueMemberBOOL{Value: true},
		"set_by": &types.AttributeValueMemberS{Value: "alice"}, "set_at": &types.AttributeValueMemberS{Value: "2026-11-01T10:00:00Z"},
	}
	if _, err := f.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(f.tables.Tasks), Item: old}); err != nil {
		t.Fatal(err)
	}
	b, err := f.store.Budget(ctx, "web", "alice", "USD")
	if err != nil || !b.AutoAllow || b.AmountField != "" || b.AmountTool != "" || b.PerAgentPerDay != 50*budget.Scale {
		t.Fatalf("old budget = %+v, %v", b, err)
	}
	out, err := f.svc.RequestStep(ctx, f.run, team.RequestStepInput{ToolName: "buy_credits", Input: json.RawMessage(`{"amount":5}`),
		ToolUseID: "tu_old", Kind: "spending", Amount: &step.Amount{Value: 5, Unit: "USD"}})
	if err != nil || out.Status != step.Pending || !strings.Contains(out.Message, "does not say which input field holds a call's amount") {
		t.Fatalf("spending under an old budget = %+v, %v; want asked, saying why", out, err)
	}
}

// TestHandApprovedSpendIsCountedWhenApproved: the owner's yes counts against
// the budget at once (the owners page shows it), and the run's use of the
// step later counts nothing more.
func TestHandApprovedSpendIsCountedWhenApproved(t *testing.T) {
	f := newOwnersFixture(t)
	ctx := context.Background()
	if _, err := f.svc.SetBudget(ctx, budget.Budget{Project: "web", Owner: "alice", Unit: "USD", PerAgentPerDay: 50 * budget.Scale}, audit.ViaPage); err != nil {
		t.Fatal(err)
	}
	in := team.RequestStepInput{ToolName: "buy_credits", Input: json.RawMessage(`{"pack":1,"usd":7}`), ToolUseID: "tu_buy",
		Kind: "spending", Amount: &step.Amount{Value: 7, Unit: "USD"}}
	asked, err := f.svc.RequestStep(ctx, f.run, in)
	if err != nil || asked.Status != step.Pending {
		t.Fatalf("asked = %+v, %v", asked, err)
	}
	if _, err := f.svc.DecideStep(ctx, "alice", f.task.ID, asked.StepID, true, nil, "", audit.ViaPage); err != nil {
		t.Fatal(err)
	}
	if got := f.spent(t); got != 7*budget.Scale {
		t.Fatalf("right after the approval, spent %s USD; want 7", got)
	}
	if _, err := f.svc.DecideStep(ctx, "alice", f.task.ID, asked.StepID, true, nil, "", audit.ViaLink); err == nil {
		t.Fatal("a step was approved twice")
	}
	used, err := f.svc.RequestStep(ctx, f.run, in)
	if err != nil || used.Behavior != "allow" {
		t.Fatalf("the run's use = %+v, %v", used, err)
	}
	if got := f.spent(t); got != 7*budget.Scale {
		t.Fatalf("after the run used the step, spent %s USD; want still 7", got)
	}
}
