package notify_test

import (
	"context"
	"strings"
	"testing"

	"github.com/useprickle/prickle/shared/auth/link"
	"github.com/useprickle/prickle/shared/domain/budget"
	"github.com/useprickle/prickle/shared/domain/event"
	"github.com/useprickle/prickle/shared/domain/modelspend"
	"github.com/useprickle/prickle/shared/owners/notify"
)

// A cap reached asks the owner once by email (a link to the decision page)
// and in Slack (Raise / Leave buttons), each with its own link, signed with
// where it went, for that agent and day only, until the day ends.
func TestACapReachedAsksTheOwnerOnce(t *testing.T) {
	f := newFixture()
	r := modelspend.Reached{Agent: "alice/writer", Owner: "alice", Day: "2026-11-29", Spent: 21_300_000, Limit: 20 * budget.Scale, Raise: 41_300_000}
	e := event.ForCapReached(r, now)
	for range 2 { // a redelivered event sends nothing more
		if err := f.n.Handle(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	msgs := f.box.List()
	if len(msgs) != 2 {
		t.Fatalf("sent %d messages, want one email and one Slack message: %+v", len(msgs), msgs)
	}
	tokens := map[string]link.Claims{}
	for _, m := range msgs {
		if m.Subject != "alice/writer reached 20 USD of model spend today" {
			t.Errorf("%s subject = %q", m.Channel, m.Subject)
		}
		if len(m.Links) != 1 || !strings.HasPrefix(m.Links[0], "https://app.example.com/c/") {
			t.Fatalf("%s links = %v, want the cap page", m.Channel, m.Links)
		}
		c, err := signer.Verify(strings.TrimPrefix(m.Links[0], "https://app.example.com/c/"), now)
		if err != nil {
			t.Fatal(err)
		}
		if c.Kind != link.KindCap || c.Agent != "alice/writer" || c.Day != "2026-11-29" || c.Owner != "alice" || !c.Expires.Equal(modelspend.NextDay(now)) {
			t.Errorf("%s link claims = %+v", m.Channel, c)
		}
		tokens[m.Channel] = c
	}
	if tokens["email"].Via != link.ViaEmail || tokens["slack"].Via != link.ViaSlack {
		t.Errorf("links say where they went: %+v", tokens)
	}
	email, slack := msgs[0], msgs[1]
	if email.Channel != "email" {
		email, slack = slack, email
	}
	if !strings.Contains(email.Text, "raise the cap for today to 41.3 USD / leave it") || !strings.Contains(email.Text, "21.3 USD spent") {
		t.Errorf("email text = %q", email.Text)
	}
	body := string(slack.Body)
	for _, want := range []string{notify.ActionCapRaise, notify.ActionCapLeave, "Raise to 41.3 USD for today", "Leave it"} {
		if !strings.Contains(body, want) {
			t.Errorf("the Slack message has no %q: %s", want, body)
		}
	}
}
