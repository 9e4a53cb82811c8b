//go:build integration

package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/useprickle/prickle/shared/auth/oauthstate"
	"github.com/useprickle/prickle/shared/aws/store"
	"github.com/useprickle/prickle/shared/aws/store/storetest"
	"github.com/useprickle/prickle/shared/domain/audit"
	"github.com/useprickle/prickle/shared/domain/budget"
	"github.com/useprickle/prickle/shared/domain/grant"
	"github.com/useprickle/prickle/shared/domain/modelspend"
	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/team"
)

// Each test here lets a write land and loses its answer (storetest.Proxy's
// LostAnswer), so the SDK sends the very same request again, as it does when
// the network drops an answer on DynamoDB. The write must count once, and the
// retry must answer the success that landed.

// lossyStore is a store through a proxy whose client gives up on an answer
// after a second (and retries, as the functions' clients do).
func lossyStore(t *testing.T) (storetest.Fixture, *storetest.Proxy, *store.Store) {
	t.Helper()
	fx := storetest.New(t)
	p := storetest.NewProxy(t)
	st := p.Store(fx, func(o *dynamodb.Options) {
		o.HTTPClient = awshttp.NewBuildableClient().WithTimeout(time.Second)
	})
	return fx, p, st
}

// lose makes the next request of op land unanswered.
func lose(p *storetest.Proxy, op string) {
	p.Inject(storetest.Rule{Fault: storetest.LostAnswer, Op: op, Times: 1})
}

func lost(t *testing.T, p *storetest.Proxy, want int) {
	t.Helper()
	if got := p.Injected()[storetest.LostAnswer]; got != want {
		t.Fatalf("the proxy lost %d answers, want %d", got, want)
	}
}

// A standing grant's use whose answer was lost is counted once.
func TestRetriedGrantUseThatLandedCountsOnce(t *testing.T) {
	_, p, st := lossyStore(t)
	ctx := context.Background()
	now := time.Now().UTC()
	g := grant.Grant{ID: "gr_lost", Project: "web", Owner: "alice", Agent: "alice/builder", Scope: grant.ScopePattern,
		ToolName: "Bash", Field: "command", Pattern: "npm test", CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	if err := st.PutGrant(ctx, g); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if i != 1 {
			lose(p, "UpdateItem")
		}
		if err := st.UseGrant(ctx, "web", g.ID, now); err != nil {
			t.Fatalf("use %d (answer lost: %v) = %v; want it counted", i+1, i != 1, err)
		}
	}
	lost(t, p, 2)
	grants, err := st.ProjectGrants(ctx, "web")
	if err != nil || len(grants) != 1 {
		t.Fatalf("grants = %v, %v", grants, err)
	}
	if grants[0].Uses != 3 {
		t.Errorf("uses = %d after 3 uses, 2 of their answers lost; want 3", grants[0].Uses)
	}
	if err := st.RevokeGrant(ctx, "web", g.ID, "alice", now); err != nil {
		t.Fatal(err)
	}
	if err := st.UseGrant(ctx, "web", g.ID, now); !errors.Is(err, team.ErrConflict) {
		t.Errorf("a use of a revoked grant = %v; want a conflict", err)
	}
}

// A budget's debit and give-back whose answers were lost each count once,
// and a debit that landed at the limit reads as the debit it was.
func TestRetriedDebitAndGiveBackThatLandedCountOnce(t *testing.T) {
	_, p, st := lossyStore(t)
	ctx := context.Background()
	key := budget.Spend{Project: "web", Owner: "alice", Unit: "USD", Agent: "alice/builder", Day: budget.Day(time.Now())}
	limit := budget.Micros(10 * budget.Scale)
	lose(p, "UpdateItem")
	if total, err := st.AddSpend(ctx, key, 5*budget.Scale, &limit); err != nil || total != 5*budget.Scale {
		t.Fatalf("a debit of 5 whose answer was lost = %v, %v; want a total of 5", total, err)
	}
	lose(p, "UpdateItem")
	if total, err := st.AddSpend(ctx, key, 5*budget.Scale, &limit); err != nil || total != 10*budget.Scale {
		t.Fatalf("a debit of 5 up to the limit of 10, answer lost = %v, %v; want a total of 10", total, err)
	}
	if _, err := st.AddSpend(ctx, key, 1*budget.Scale, &limit); !errors.Is(err, team.ErrConflict) {
		t.Errorf("a debit over the limit = %v; want a conflict", err)
	}
	lose(p, "UpdateItem")
	if total, err := st.AddSpend(ctx, key, -5*budget.Scale, nil); err != nil || total != 5*budget.Scale {
		t.Fatalf("a give-back of 5 whose answer was lost = %v, %v; want a total of 5", total, err)
	}
	lost(t, p, 3)
	if spent, err := st.Spent(ctx, key); err != nil || spent != 5*budget.Scale {
		t.Errorf("spent = %v, %v; want 5 (two debits of 5, one give-back of 5)", spent, err)
	}
}

// An owner's decision whose transaction landed unanswered is the decision:
// the retry answers success, and what it carried (the spend) counts once.
func TestRetriedDecisionThatLandedIsStillTheDecision(t *testing.T) {
	_, p, st := lossyStore(t)
	ctx := context.Background()
	now := time.Now().UTC()
	s := sampleStep(t, "tsk_lost", "stp_1", `{"command":"pay"}`, now)
	s.Project, s.Agent, s.Kind = "web", "alice/builder", "spending"
	if err := st.SaveSteps(ctx, team.StepChange{Steps: []team.StepWrite{{Step: s}}, At: now}); err != nil {
		t.Fatal(err)
	}
	approved := s
	approved.Status, approved.DecidedBy, approved.DecidedAt, approved.DecidedVia = step.Approved, "alice", &now, "web"
	key := budget.Spend{Project: "web", Owner: "alice", Unit: "USD", Agent: "alice/builder", Day: budget.Day(now), Spent: 12 * budget.Scale}
	lose(p, "TransactWriteItems")
	err := st.SaveSteps(ctx, team.StepChange{Steps: []team.StepWrite{{Step: approved, Prev: step.Pending}}, Spend: &key, At: now})
	if err != nil {
		t.Fatalf("an approval whose transaction landed, retried = %v; want success", err)
	}
	lost(t, p, 1)
	if got, err := st.Step(ctx, s.TaskID, s.ID); err != nil || got.Status != step.Approved {
		t.Errorf("step = %s, %v; want approved", got.Status, err)
	}
	if spent, err := st.Spent(ctx, key); err != nil || spent != 12*budget.Scale {
		t.Errorf("spent = %v, %v; want the approved 12 once", spent, err)
	}
	refused := s
	refused.Status = step.Refused
	if err := st.SaveSteps(ctx, team.StepChange{Steps: []team.StepWrite{{Step: refused, Prev: step.Pending}}, At: now}); !errors.Is(err, team.ErrConflict) {
		t.Errorf("a second decision = %v; want a conflict", err)
	}
}

// A run's model spend whose transaction landed unanswered is recorded, once.
func TestRetriedRunReportThatLandedIsRecordedOnce(t *testing.T) {
	_, p, st := lossyStore(t)
	ctx := context.Background()
	now := time.Now().UTC()
	r := modelspend.NewRun("alice/builder", "web", "tsk_lost", "run_1", modelspend.Report{CostUSD: 0.25, InputTokens: 100, OutputTokens: 10, Turns: 1}, now)
	lose(p, "TransactWriteItems")
	if recorded, err := st.RecordRun(ctx, r); err != nil || !recorded {
		t.Fatalf("a run report that landed, retried = %v, %v; want recorded", recorded, err)
	}
	lost(t, p, 1)
	if again, err := st.RecordRun(ctx, r); err != nil || again {
		t.Errorf("the same run reported again = %v, %v; want not recorded", again, err)
	}
	spend, err := st.AgentsSpend(ctx, []string{"alice/builder"}, modelspend.Day(now), modelspend.Month(now))
	if err != nil || len(spend) != 1 {
		t.Fatalf("spend = %v, %v", spend, err)
	}
	if spend[0].Today.Runs != 1 || spend[0].Today.Cost != r.Cost {
		t.Errorf("today = %+v; want one run of %v", spend[0].Today.Totals, r.Cost)
	}
}

// An owner's revocation of a grant whose answer was lost is the revocation,
// not "already revoked".
func TestRetriedGrantRevocationThatLandedIsTheRevocation(t *testing.T) {
	_, p, st := lossyStore(t)
	ctx := context.Background()
	now := time.Now().UTC()
	g := grant.Grant{ID: "gr_revoke", Project: "web", Owner: "alice", Agent: "alice/builder", Scope: grant.ScopePattern,
		ToolName: "Bash", Field: "command", Pattern: "npm test", CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	if err := st.PutGrant(ctx, g); err != nil {
		t.Fatal(err)
	}
	lose(p, "UpdateItem")
	if err := st.RevokeGrant(ctx, "web", g.ID, "alice", now); err != nil {
		t.Fatalf("a revocation that landed, retried = %v; want it revoked", err)
	}
	lost(t, p, 1)
	if err := st.RevokeGrant(ctx, "web", g.ID, "alice", now); !errors.Is(err, team.ErrConflict) {
		t.Errorf("a second revocation = %v; want a conflict", err)
	}
}

// A code or refresh token marked used, its answer lost, is used by this
// call: the retry is not a replay (which fosite answers by ending the
// connection).
func TestRetriedOAuthUseThatLandedIsTheUse(t *testing.T) {
	_, p, st := lossyStore(t)
	ctx := context.Background()
	const hash = "5e0f4c2c3c1f7e2b8a1d0c9b8a7f6e5d4c3b2a1908f7e6d5c4b3a29180706050"
	r := oauthstate.Record{Kind: oauthstate.KindRefresh, Hash: hash, Family: "fam_1", Active: true, Expires: time.Now().Add(time.Hour), Request: []byte("{}")}
	if err := st.PutOAuthRecord(ctx, r); err != nil {
		t.Fatal(err)
	}
	lose(p, "UpdateItem")
	if err := st.DeactivateOAuthRecord(ctx, oauthstate.KindRefresh, hash); err != nil {
		t.Fatalf("a use that landed, retried = %v; want it used by this call", err)
	}
	lost(t, p, 1)
	if err := st.DeactivateOAuthRecord(ctx, oauthstate.KindRefresh, hash); !errors.Is(err, oauthstate.ErrInactive) {
		t.Errorf("a second use = %v; want ErrInactive", err)
	}
}

// The measurement as a story on the team service: with one answer in
// 5 lost on every kind of write, an owner's approval with a grant chosen, 10
// calls under that grant and 11 spending steps of 5 USD against a 50 USD
// budget: each allowed once, each use and debit counted once, the 11th asked
// of the owner, no landed success answered as a failure.
// It runs twice: with the client request token, and without it (where only
// what each write records tells its retry that it landed).
func TestOwnersStoryUnderLostAnswers(t *testing.T) {
	t.Run("with client request tokens", func(t *testing.T) { ownersStoryUnderLostAnswers(t, false) })
	t.Run("without them", func(t *testing.T) { ownersStoryUnderLostAnswers(t, true) })
}

func ownersStoryUnderLostAnswers(t *testing.T, dropTokens bool) {
	fx, p, st := lossyStore(t)
	if dropTokens {
		p.DropTokens()
	}
	f := ownersOn(t, fixture{store: st, client: fx.Client, tables: fx.Tables})
	ctx := context.Background()
	if _, err := f.svc.SetBudget(ctx, budget.Budget{Project: "web", Owner: "alice", Unit: "USD", PerAgentPerDay: 50 * budget.Scale, AutoAllow: true, AmountField: "usd"}, audit.ViaPage); err != nil {
		t.Fatal(err)
	}
	first := f.push(t, "main", "tu_first")
	lose(p, "TransactWriteItems")
	if _, err := f.svc.DecideStep(ctx, "alice", f.task.ID, first.StepID, true, nil, "", audit.ViaPage); err != nil {
		t.Fatalf("an approval whose transaction landed unanswered = %v; want it approved", err)
	}
	lost(t, p, 1)
	g, err := f.svc.GrantFromStep(ctx, "alice", f.task.ID, first.StepID, team.GrantRequest{Scope: grant.ScopePattern, Hours: 1, Field: "command", Pattern: "git push origin *"})
	if err != nil {
		t.Fatalf("the grant chosen with the approval = %v", err)
	}

	for _, op := range []string{"PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems"} {
		p.Inject(storetest.Rule{Fault: storetest.LostAnswer, Op: op, Every: 5})
	}
	for i := range 10 {
		if out := f.push(t, fmt.Sprintf("b%d", i), fmt.Sprintf("tu_push_%d", i)); out.Behavior != "allow" {
			t.Errorf("push %d under the grant = %+v; want allowed", i, out)
		}
	}
	var answers []team.RequestStepOutput
	for i := range 11 {
		out, err := f.svc.RequestStep(ctx, f.run, team.RequestStepInput{ToolName: "buy_credits",
			Input: json.RawMessage(fmt.Sprintf(`{"pack":%d,"usd":5}`, i)), ToolUseID: fmt.Sprintf("tu_buy_%d", i),
			Kind: "spending", Amount: &step.Amount{Value: 5, Unit: "USD"}})
		if err != nil {
			t.Fatalf("spending step %d = %v; want an answer, not an error", i, err)
		}
		answers = append(answers, out)
	}
	p.Clear()
	n := p.Injected()[storetest.LostAnswer]
	t.Logf("%d answers lost", n)
	if n < 5 {
		t.Fatalf("the proxy lost %d answers; the story should meet several", n)
	}
	for i, out := range answers[:10] {
		if out.Behavior != "allow" || out.Status != step.Consumed {
			t.Errorf("spending step %d of 5 USD within 50 = %+v; want allowed", i, out)
		}
	}
	if last := answers[10]; last.Behavior != "deny" || last.Status != step.Pending || !strings.Contains(last.Message, "0 USD left of 50 USD") {
		t.Errorf("the 11th step of 5 USD = %+v; want asked of the owner with 0 USD left", last)
	}
	if spent := f.spent(t); spent != 50*budget.Scale {
		t.Errorf("spent %s USD; want exactly 50", spent)
	}
	grants, err := f.store.ProjectGrants(ctx, "web")
	if err != nil || len(grants) != 1 || grants[0].ID != g.ID {
		t.Fatalf("grants = %v, %v", grants, err)
	}
	if grants[0].Uses != 10 {
		t.Errorf("grant uses = %d after 10 pushes; want 10", grants[0].Uses)
	}
	entries, err := f.store.ProjectAudit(ctx, "web")
	if err != nil {
		t.Fatal(err)
	}
	allowed := 0
	for _, e := range entries {
		if e.Action == audit.StepAllowed {
			allowed++
		}
	}
	if allowed != 20 {
		t.Errorf("%d step_allowed audit entries for 10 pushes and 10 spending steps; want 20", allowed)
	}
}

// Without the client request token (a DynamoDB or an emulator that ignored
// it), a decision and a run's report that landed unanswered are still
// recognised, by their own id in the items they wrote (write_id).
func TestRetriedTransactionsThatLandedWithoutTokensAreRecognised(t *testing.T) {
	_, p, st := lossyStore(t)
	p.DropTokens()
	ctx := context.Background()
	now := time.Now().UTC()
	s := sampleStep(t, "tsk_notoken", "stp_1", `{"command":"pay"}`, now)
	s.Project, s.Agent = "web", "alice/builder"
	lose(p, "TransactWriteItems")
	if err := st.SaveSteps(ctx, team.StepChange{Steps: []team.StepWrite{{Step: s}}, At: now}); err != nil {
		t.Fatalf("a new step whose transaction landed, retried without its token = %v; want success", err)
	}
	approved := s
	approved.Status, approved.DecidedBy, approved.DecidedAt = step.Approved, "alice", &now
	lose(p, "TransactWriteItems")
	if err := st.SaveSteps(ctx, team.StepChange{Steps: []team.StepWrite{{Step: approved, Prev: step.Pending}}, At: now}); err != nil {
		t.Fatalf("an approval whose transaction landed, retried without its token = %v; want success", err)
	}
	r := modelspend.NewRun("alice/builder", "web", "tsk_notoken", "run_1", modelspend.Report{CostUSD: 0.5, Turns: 1}, now)
	lose(p, "TransactWriteItems")
	if recorded, err := st.RecordRun(ctx, r); err != nil || !recorded {
		t.Fatalf("a run report that landed, retried without its token = %v, %v; want recorded", recorded, err)
	}
	lost(t, p, 3)
	if err := st.SaveSteps(ctx, team.StepChange{Steps: []team.StepWrite{{Step: approved, Prev: step.Pending}}, At: now}); !errors.Is(err, team.ErrConflict) {
		t.Errorf("a second approval = %v; want a conflict", err)
	}
	if again, err := st.RecordRun(ctx, r); err != nil || again {
		t.Errorf("the same run reported again = %v, %v; want not recorded", again, err)
	}
}
