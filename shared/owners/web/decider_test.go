package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/useprickle/prickle/shared/auth/link"
	"github.com/useprickle/prickle/shared/domain/step"
)

func TestWhoMayDecideInMemory(t *testing.T) { runWhoMayDecide(t, newFakeRoom) }

// approvalLinks are the paths of the approval links the outbox holds for a
// step: the one emailed to the owner and the one posted to the owner's Slack channel.
func (e *roomEnv) approvalLinks(stepID string) (email, slack string) {
	e.t.Helper()
	for _, m := range e.box.List() {
		if len(m.Links) == 0 || !strings.HasPrefix(m.Links[0], e.srv.URL+"/a/") {
			continue
		}
		c, err := signer.Verify(strings.TrimPrefix(m.Links[0], e.srv.URL+"/a/"), e.clock.now())
		if err != nil || c.StepID != stepID {
			continue
		}
		path := strings.TrimPrefix(m.Links[0], e.srv.URL)
		switch m.Channel {
		case "email":
			email = path
		case "slack":
			slack = path
		}
	}
	if email == "" || slack == "" || email == slack {
		e.t.Fatalf("step %s: email link %q, Slack link %q; want two distinct links", stepID, email, slack)
	}
	return email, slack
}

func (e *roomEnv) stepStatus(taskID, stepID string) (step.Status, string) {
	e.t.Helper()
	st, err := e.store.Step(context.Background(), taskID, stepID)
	if err != nil {
		e.t.Fatal(err)
	}
	return st.Status, st.DecidedBy
}

// runWhoMayDecide is the rule: a link posted to a
// shared destination (Slack) decides only with its owner signed in, and the
// page asks her to sign in and brings her back; a signed-in different owner
// is refused (403) on any link; an emailed link decides by itself.
func runWhoMayDecide(t *testing.T, newStore func(t *testing.T) roomBackend) {
	e := newRoomEnv(t, newStore(t))
	tk := e.workingTask("tsk_shared", "alice/writer", "bob/reviewer")
	stepID := e.askStep(tk.ID, "alice/writer")
	emailLink, slackLink := e.approvalLinks(stepID)
	slackToken := strings.TrimPrefix(slackLink, "/a/")
	approve := func(token string) url.Values {
		return url.Values{"csrf": {signer.FormToken(token)}, "decision": {"approve"}}
	}
	pending := func(when string) {
		t.Helper()
		if status, by := e.stepStatus(tk.ID, stepID); status != step.Pending {
			t.Fatalf("%s: the step is %s by %q, want pending", when, status, by)
		}
	}

	// Anyone in the channel: the page shows the call and asks alice to sign in; it decides nothing.
	channel := e.browser()
	page := channel.get(slackLink)
	if page.status != http.StatusOK || !strings.Contains(page.text, "git push origin main") {
		t.Fatalf("Slack link, nobody signed in: %d:\n%s", page.status, page.text)
	}
	for _, want := range []string{"posted to alice's Slack channel", "decides only with alice signed in", `id="signin-to-decide"`} {
		if !strings.Contains(page.raw, want) && !strings.Contains(page.text, want) {
			t.Errorf("Slack link page lacks %q:\n%s", want, page.text)
		}
	}
	if strings.Contains(page.raw, `id="decide"`) {
		t.Error("the Slack link shows the decide form to someone not signed in")
	}
	if r := channel.do(http.MethodPost, slackLink, approve(slackToken)); r.status != http.StatusForbidden || !strings.Contains(r.text, "Sign in as alice") {
		t.Errorf("Slack link POST, nobody signed in: %d:\n%s", r.status, r.text)
	}
	pending("after the channel's POST")

	// bob, signed in: refused on alice's links, Slack and email alike.
	bob := e.signIn("bob")
	for name, path := range map[string]string{"Slack": slackLink, "email": emailLink} {
		r := bob.get(path)
		if r.status != http.StatusForbidden || !strings.Contains(r.text, "You are signed in as bob") || strings.Contains(r.text, "git push origin main") {
			t.Errorf("%s link, bob signed in: GET %d:\n%s", name, r.status, r.text)
		}
		if r := bob.do(http.MethodPost, path, approve(strings.TrimPrefix(path, "/a/"))); r.status != http.StatusForbidden {
			t.Errorf("%s link, bob signed in: POST %d:\n%s", name, r.status, r.text)
		}
	}
	pending("after bob's POSTs")

	// alice from the Slack link: sign in from the page, come back to it, decide.
	alice := e.browser()
	form := alice.get(slackLink)
	next := roomNext.FindStringSubmatch(form.raw)
	if next == nil || next[1] != strings.TrimPrefix(slackLink, "/") {
		t.Fatalf("the sign-in form of the Slack link returns to %v, want %q:\n%s", next, strings.TrimPrefix(slackLink, "/"), form.raw)
	}
	if r := alice.do(http.MethodPost, "/signin", url.Values{"owner": {"alice"}, "next": {next[1]}}); r.status != http.StatusOK {
		t.Fatalf("POST /signin from the approval page: %d:\n%s", r.status, r.text)
	}
	signinPath := strings.TrimPrefix(e.lastLink("alice@example.com"), e.srv.URL)
	signinPage := alice.get(signinPath)
	back := alice.do(http.MethodPost, signinPath, url.Values{"csrf": {formToken(t, signinPage)}})
	if back.status != http.StatusSeeOther || back.header.Get("Location") != "../a/"+slackToken {
		t.Fatalf("after signing in: %d to %q, want back to the approval page ../a/%s", back.status, back.header.Get("Location"), slackToken)
	}
	page = alice.get(slackLink)
	if page.status != http.StatusOK || !strings.Contains(page.raw, `id="decide"`) {
		t.Fatalf("Slack link, alice signed in: %d:\n%s", page.status, page.text)
	}
	if r := alice.do(http.MethodPost, slackLink, url.Values{"csrf": {formToken(t, page)}, "decision": {"approve"}}); r.status != http.StatusSeeOther {
		t.Fatalf("Slack link POST by alice: %d:\n%s", r.status, r.text)
	}
	if status, by := e.stepStatus(tk.ID, stepID); status != step.Approved || by != "alice" {
		t.Fatalf("after alice's decision the step is %s by %q", status, by)
	}
	if alice.cookies["prickle_next"] != nil {
		t.Error("the return path outlived its use")
	}

	// An emailed link decides by itself: nobody needs to be signed in.
	tk2 := e.workingTask("tsk_emailed", "alice/writer", "bob/reviewer")
	step2 := e.askStep(tk2.ID, "alice/writer")
	emailLink2, _ := e.approvalLinks(step2)
	inbox := e.browser()
	page = inbox.get(emailLink2)
	if !strings.Contains(page.text, "sent to alice's email") {
		t.Errorf("email link page does not say who may decide:\n%s", page.text)
	}
	if r := inbox.do(http.MethodPost, emailLink2, url.Values{"csrf": {formToken(t, page)}, "decision": {"refuse"}, "message": {"not today"}}); r.status != http.StatusSeeOther {
		t.Fatalf("email link POST, nobody signed in: %d:\n%s", r.status, r.text)
	}
	if status, by := e.stepStatus(tk2.ID, step2); status != step.Refused || by != "alice" {
		t.Fatalf("after the emailed decision the step is %s by %q", status, by)
	}

	// A link that names no destination (minted before links did) counts as shared.
	tk3 := e.workingTask("tsk_legacy", "alice/writer", "bob/reviewer")
	step3 := e.askStep(tk3.ID, "alice/writer")
	st3, err := e.store.Step(context.Background(), tk3.ID, step3)
	if err != nil {
		t.Fatal(err)
	}
	legacy := signer.Sign(link.ForStep(tk3.ID, step3, "alice", st3.ExpiresAt))
	if r := e.browser().do(http.MethodPost, "/a/"+legacy, approve(legacy)); r.status != http.StatusForbidden {
		t.Errorf("legacy link POST, nobody signed in: %d:\n%s", r.status, r.text)
	}
}
