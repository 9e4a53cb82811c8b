package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/useprickle/prickle/shared/auth/session"
	"github.com/useprickle/prickle/shared/domain/audit"
	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/owners/notify/outbox"
)

func TestChannelReaderInMemory(t *testing.T) { runChannelReader(t, newFakeRoom) }

// runChannelReader is the attack of a stranger who reads alice's Slack
// channel (#alice): she asks for alice's sign-in link from her own network,
// then follows every link the channel receives, and tries to decide alice's
// Slack-delivered step. The sign-in link never reaches the channel (email and
// a DM to alice's Slack member id only), so she gets no session and decides
// nothing. Each decision alice makes with a session says in the audit trail
// how that session was signed in.
func runChannelReader(t *testing.T, newStore func(t *testing.T) roomBackend) {
	ctx := context.Background()
	e := newRoomEnv(t, newStore(t))
	tk := e.workingTask("tsk_channel", "alice/writer", "bob/reviewer")
	stepID := e.askStep(tk.ID, "alice/writer")
	_, slackLink := e.approvalLinks(stepID)

	stranger := e.from("198.51.100.7:4000")
	if r := stranger.do(http.MethodPost, "/signin", url.Values{"owner": {"alice"}}); r.status != http.StatusOK {
		t.Fatalf("POST /signin as a stranger: %d:\n%s", r.status, r.text)
	}
	var dm bool
	for _, m := range e.box.List() {
		for _, l := range m.Links {
			if !strings.Contains(l, "/signin/") {
				continue
			}
			switch {
			case m.Channel == "slack" && m.To == "U0ALICE":
				dm = true
			case m.Channel == "email" && m.To == "alice@example.com":
			default:
				t.Errorf("a sign-in link for alice went to %s %s, which is not hers alone", m.Channel, m.To)
			}
			if m.To != "#alice" {
				continue
			}
			path := strings.TrimPrefix(l, e.srv.URL)
			page := stranger.get(path)
			if page.status == http.StatusOK {
				stranger.do(http.MethodPost, path, url.Values{"csrf": {formToken(t, page)}})
			}
		}
	}
	if !dm {
		t.Errorf("no sign-in link as a Slack DM to alice's member id U0ALICE: %s", destinations(e.box.List()))
	}
	if stranger.cookies[session.CookieName] != nil {
		t.Error("the channel's reader got a session")
	}
	if r := stranger.get(slackLink); r.status != http.StatusOK || strings.Contains(r.raw, `id="decide"`) {
		t.Errorf("the Slack link for the channel's reader: %d, decide form shown: %t", r.status, strings.Contains(r.raw, `id="decide"`))
	}
	if r := stranger.do(http.MethodPost, slackLink, url.Values{"csrf": {signer.FormToken(strings.TrimPrefix(slackLink, "/a/"))}, "decision": {"approve"}}); r.status != http.StatusForbidden {
		t.Errorf("the channel's reader POSTs the Slack link: %d", r.status)
	}
	if status, by := e.stepStatus(tk.ID, stepID); status != step.Pending {
		t.Fatalf("the channel's reader decided alice's step: %s by %q", status, by)
	}

	// alice decides with sessions: the trail says how each was signed in.
	byEmail := e.signIn("alice")
	page := byEmail.get(slackLink)
	if r := byEmail.do(http.MethodPost, slackLink, url.Values{"csrf": {formToken(t, page)}, "decision": {"approve"}}); r.status != http.StatusSeeOther {
		t.Fatalf("alice approves on the Slack link: %d:\n%s", r.status, r.text)
	}
	byDM := e.signInBy("alice", "U0ALICE")
	tk2 := e.workingTask("tsk_channel_2", "alice/writer", "bob/reviewer")
	step2 := e.askStep(tk2.ID, "alice/writer")
	if r := byDM.do(http.MethodPost, "/t/"+tk2.ID, url.Values{"csrf": {formToken(t, byDM.get("/t/"+tk2.ID))}, "step": {step2}, "decision": {"refuse"}}); r.status != http.StatusSeeOther {
		t.Fatalf("alice refuses on the task page: %d:\n%s", r.status, r.text)
	}
	tk3 := e.workingTask("tsk_channel_3", "alice/writer", "bob/reviewer")
	step3 := e.askStep(tk3.ID, "alice/writer")
	emailLink3, _ := e.approvalLinks(step3)
	inbox := e.browser()
	if r := inbox.do(http.MethodPost, emailLink3, url.Values{"csrf": {formToken(t, inbox.get(emailLink3))}, "decision": {"approve"}}); r.status != http.StatusSeeOther {
		t.Fatalf("alice approves from her email, not signed in: %d:\n%s", r.status, r.text)
	}
	entries, err := e.svc.ProjectAudit(ctx, "website-v2")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		stepID: "approval link (signed in by email link)",
		step2:  "task page (signed in by Slack DM link)",
		step3:  "approval link",
	}
	for _, en := range entries {
		if en.Action != audit.StepApproved && en.Action != audit.StepRefused {
			continue
		}
		if w, ok := want[en.StepID]; ok {
			if en.Via != w || en.Actor != "owner:alice" {
				t.Errorf("%s of %s: actor %q via %q, want owner:alice via %q", en.Action, en.StepID, en.Actor, en.Via, w)
			}
			delete(want, en.StepID)
		}
	}
	if len(want) != 0 {
		t.Errorf("no decision entries for %v in %+v", want, entries)
	}
}

// destinations lists where messages went, for a failure message.
func destinations(msgs []outbox.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		fmt.Fprintf(&b, "\n  %s to %s: %s", m.Channel, m.To, m.Subject)
	}
	return b.String()
}
