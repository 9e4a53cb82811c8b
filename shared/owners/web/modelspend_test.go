package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/domain/modelspend"
)

// report records what a run of agent on taskID reported, as POST /runner/ended does.
func (e *roomEnv) report(agent, taskID, runID string, cost float64) {
	e.t.Helper()
	run := identity.Caller{Agent: agent, Owner: strings.Split(agent, "/")[0], Kind: identity.KindRun, TaskID: taskID, RunID: runID}
	if _, err := e.spend.Record(context.Background(), run, modelspend.Report{CostUSD: cost, InputTokens: 1000, OutputTokens: 10, Turns: 4, DurationMS: 9000, Model: "claude-opus-5-5"}); err != nil {
		e.t.Fatal(err)
	}
}

// capLink is the cap page's link the outbox holds for to (email or Slack channel), as a path.
func (e *roomEnv) capLink(to string) string {
	e.t.Helper()
	for _, m := range e.box.List() {
		if m.To == to && len(m.Links) > 0 && strings.Contains(m.Links[0], "/c/") {
			return strings.TrimPrefix(m.Links[0], e.srv.URL)
		}
	}
	e.t.Fatalf("no cap link to %s in the outbox: %+v", to, e.box.List())
	return ""
}

func TestModelSpendOnThePages(t *testing.T) {
	e := newRoomEnv(t, newFakeRoom(t))
	tk := e.workingTask("tsk_spendpage", "alice/writer", "bob/reviewer")
	e.report("alice/writer", tk.ID, "run_one", 0.0123)
	e.report("alice/writer", tk.ID, "run_two", 1.5)
	alice, bob := e.signIn("alice"), e.signIn("bob")

	page := bob.get("/t/" + tk.ID)
	for _, want := range []string{`data-run="run_one"`, `<td class="cost">0.0123</td>`, `<td class="cost">1.5</td>`, `id="runs-total">1.5123 USD`, "claude-opus-5-5"} {
		if !strings.Contains(page.raw, want) {
			t.Errorf("the task page has no %s:\n%s", want, page.text)
		}
	}
	pulse := bob.get("/p/website-v2")
	if !strings.Contains(pulse.raw, `data-spend-today="1.5123" data-spend-month="1.5123"`) {
		t.Errorf("Team Pulse does not show alice/writer's spend:\n%s", pulse.text)
	}
	owners := alice.get("/p/website-v2/owners")
	if !strings.Contains(owners.raw, `id="cap-form-alice/writer"`) || strings.Contains(owners.raw, `id="cap-form-bob/reviewer"`) {
		t.Errorf("alice's owners page offers a cap form for her agent only:\n%s", owners.text)
	}

	// alice caps her agent below the day's spend: it is over at once.
	csrf := formToken(t, owners)
	if r := alice.do(http.MethodPost, "/p/website-v2/caps", url.Values{"csrf": {csrf}, "agent": {"alice/writer"}, "cap": {"1"}}); r.status != http.StatusSeeOther {
		t.Fatalf("set cap = %d:\n%s", r.status, r.text)
	}
	for _, bad := range []url.Values{
		{"csrf": {csrf}, "agent": {"bob/reviewer"}, "cap": {"1"}},  // another owner's agent
		{"csrf": {csrf}, "agent": {"alice/writer"}, "cap": {"-1"}}, // out of bounds
		{"csrf": {csrf}, "agent": {"alice/writer"}, "cap": {"1e9"}},
		{"csrf": {csrf}, "agent": {"carol/tester"}, "cap": {"5"}}, // not in this project
	} {
		if r := alice.do(http.MethodPost, "/p/website-v2/caps", bad); r.status != http.StatusConflict || !strings.Contains(r.text, "Nothing was changed") {
			t.Errorf("cap %v = %d, want 409 refused", bad, r.status)
		}
	}
	if r := alice.do(http.MethodPost, "/p/website-v2/caps", url.Values{"csrf": {"forged"}, "agent": {"alice/writer"}, "cap": {"100"}}); r.status != http.StatusForbidden {
		t.Errorf("a forged form = %d, want 403", r.status)
	}
	owners = alice.get("/p/website-v2/owners")
	if !strings.Contains(owners.text, "cap reached: new runs wait until the cap is raised or 00:00 UTC") {
		t.Errorf("the owners page does not say the cap is reached:\n%s", owners.text)
	}

	// The next check asks alice once, by email and Slack, with a cap link each.
	if _, err := e.spend.Gate(context.Background(), "alice/writer"); err != nil {
		t.Fatal(err)
	}
	emailed, posted := e.capLink("alice@example.com"), e.capLink("#alice")

	// The Slack link is shared: it decides only with alice signed in.
	anon := e.browser()
	if r := anon.get(posted); r.status != http.StatusOK || strings.Contains(r.raw, `id="raise"`) || !strings.Contains(r.raw, `id="send-signin"`) {
		t.Errorf("the Slack link without a session = %d; want the sign-in offer, no Raise:\n%s", r.status, r.text)
	}
	// Signing in from it comes back to it, and then it offers the decision.
	next := roomNext.FindStringSubmatch(anon.get(posted).raw)
	if next == nil || next[1] != strings.TrimPrefix(posted, "/") {
		t.Fatalf("the sign-in form of the Slack link returns to %v, want %q", next, strings.TrimPrefix(posted, "/"))
	}
	viaSlack := e.browser()
	if r := viaSlack.do(http.MethodPost, "/signin", url.Values{"owner": {"alice"}, "next": {next[1]}}); r.status != http.StatusOK {
		t.Fatalf("POST /signin from the cap page: %d", r.status)
	}
	signinPath := strings.TrimPrefix(e.lastLink("alice@example.com"), e.srv.URL)
	back := viaSlack.do(http.MethodPost, signinPath, url.Values{"csrf": {formToken(t, viaSlack.get(signinPath))}})
	if back.status != http.StatusSeeOther || back.header.Get("Location") != "../"+next[1] {
		t.Fatalf("after signing in: %d to %q, want back to ../%s", back.status, back.header.Get("Location"), next[1])
	}
	if r := viaSlack.get(posted); !strings.Contains(r.raw, `id="raise"`) {
		t.Errorf("the Slack link, alice signed in, offers no Raise:\n%s", r.text)
	}
	// Another owner signed in sees nothing of it.
	if r := bob.get(emailed); r.status != http.StatusForbidden || strings.Contains(r.text, "1.5123") {
		t.Errorf("bob on alice's cap link = %d:\n%s", r.status, r.text)
	}
	// The emailed link decides by itself; GET changes nothing.
	show := anon.get(emailed)
	if show.status != http.StatusOK || !strings.Contains(show.text, "Raise the cap for today to 2.5123 USD") {
		t.Fatalf("the cap page = %d:\n%s", show.status, show.text)
	}
	if a, _ := e.spend.Spend(context.Background(), "alice/writer"); a.Today.Decision != "" {
		t.Fatal("opening the link decided")
	}
	token := formToken(t, show)
	if r := anon.do(http.MethodPost, emailed, url.Values{"csrf": {"forged"}, "decision": {"raise"}}); r.status != http.StatusForbidden {
		t.Errorf("a forged form = %d, want 403", r.status)
	}
	if r := anon.do(http.MethodPost, emailed, url.Values{"csrf": {token}, "decision": {"raise"}}); r.status != http.StatusSeeOther {
		t.Fatalf("raise = %d:\n%s", r.status, r.text)
	}
	if a, _ := e.spend.Spend(context.Background(), "alice/writer"); a.Status().Over || a.Today.RaisedTo.String() != "2.5123" {
		t.Errorf("after the raise: %+v", a.Today)
	}
	if r := anon.get(emailed + "?done=1"); !strings.Contains(r.text, "Your decision is recorded") || !strings.Contains(r.text, "raised for today to 2.5123 USD") {
		t.Errorf("after the decision the page says:\n%s", r.text)
	}
	// Single use: the same link (or the Slack one, signed in) decides nothing more.
	if r := anon.do(http.MethodPost, emailed, url.Values{"csrf": {token}, "decision": {"leave"}}); r.status != http.StatusConflict || !strings.Contains(r.text, "already decided by alice") {
		t.Errorf("a second decision = %d:\n%s", r.status, r.text)
	}
	slackPage := alice.get(posted)
	if strings.Contains(slackPage.raw, `id="raise"`) {
		t.Errorf("the Slack link still offers Raise after the decision:\n%s", slackPage.text)
	}
	// A tampered link decides nothing.
	if r := anon.get(emailed[:len(emailed)-3] + "AAA"); r.status != http.StatusForbidden {
		t.Errorf("a tampered link = %d, want 403", r.status)
	}
}
