package notify_test

import (
	"context"
	"strings"
	"testing"

	"github.com/useprickle/prickle/shared/auth/session"
	"github.com/useprickle/prickle/shared/domain/event"
	"github.com/useprickle/prickle/shared/owners/notify/outbox"
	"github.com/useprickle/prickle/shared/team"
)

// signInLinks sends owner's sign-in links (the event delivered twice, as
// EventBridge may) and returns the outbox's messages.
func signInLinks(t *testing.T, o team.Owner) fixture {
	t.Helper()
	f := newFixture()
	f.n.Owners = owners{o.Name: o}
	e := event.ForSignIn(o.Name, "n1", now)
	for range 2 {
		if err := f.n.Handle(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// TestSignInLinksReachTheOwnerAlone: a sign-in link goes to the owner's email
// and, in Slack, only as a direct message to the owner's member id: never to
// the owner's Slack channel, which others read (whoever reads it could sign in
// as the owner). Each link says, signed, where it was sent.
func TestSignInLinksReachTheOwnerAlone(t *testing.T) {
	keys, err := session.NewKeys(signer.Key)
	if err != nil {
		t.Fatal(err)
	}
	via := func(t *testing.T, u string) string {
		t.Helper()
		token, ok := strings.CutPrefix(u, "https://app.example.com/signin/")
		if !ok {
			t.Fatalf("link %q is not a sign-in link", u)
		}
		c, err := keys.CheckSignIn(token, now)
		if err != nil || c.Owner != "alice" {
			t.Fatalf("sign-in link %q: claims %+v, %v", u, c, err)
		}
		return c.Via
	}

	t.Run("email, and a Slack DM to the member id; nothing to the channel", func(t *testing.T) {
		f := signInLinks(t, team.Owner{Name: "alice", Email: "alice@example.com", SlackChannel: "C0ALICE", SlackUserID: "U0ALICE"})
		msgs := f.box.List()
		if len(msgs) != 2 {
			t.Fatalf("outbox: %s; want one email and one Slack DM", sentTo(msgs))
		}
		email, dm := msgs[0], msgs[1]
		if email.Channel != "email" || email.To != "alice@example.com" || len(email.Links) != 1 || via(t, email.Links[0]) != session.ViaEmail {
			t.Errorf("email to %s: %v", email.To, email.Links)
		}
		if dm.Channel != "slack" || dm.To != "U0ALICE" || len(dm.Links) != 1 || via(t, dm.Links[0]) != session.ViaSlackDM {
			t.Errorf("Slack message to %s: %v; want a DM to U0ALICE whose link says so", dm.To, dm.Links)
		}
		if email.Links[0] == dm.Links[0] {
			t.Error("the email and the DM carry the same link")
		}
		if !strings.Contains(dm.Text, "Sign in to Prickle as alice") || !strings.Contains(string(dm.Body), `"channel":"U0ALICE"`) {
			t.Errorf("DM = %q, body %s", dm.Text, dm.Body)
		}
	})
	t.Run("a channel but no member id: email only", func(t *testing.T) {
		f := signInLinks(t, team.Owner{Name: "alice", Email: "alice@example.com", SlackChannel: "C0ALICE"})
		for _, m := range f.box.List() {
			if m.Channel != "email" {
				t.Errorf("sent %s to %s; only the owner's email may get a sign-in link", m.Channel, m.To)
			}
		}
		if len(f.box.List()) != 1 {
			t.Errorf("outbox: %s; want the email", sentTo(f.box.List()))
		}
	})
	t.Run("a channel alone: nothing is sent, and the event is not retried", func(t *testing.T) {
		if msgs := signInLinks(t, team.Owner{Name: "alice", SlackChannel: "C0ALICE"}).box.List(); len(msgs) != 0 {
			t.Errorf("outbox: %s; an owner with no email and no Slack member id gets no sign-in link", sentTo(msgs))
		}
	})
	t.Run("a Slack member id alone: the DM", func(t *testing.T) {
		msgs := signInLinks(t, team.Owner{Name: "alice", SlackUserID: "W0ALICE"}).box.List()
		if len(msgs) != 1 || msgs[0].Channel != "slack" || msgs[0].To != "W0ALICE" || via(t, msgs[0].Links[0]) != session.ViaSlackDM {
			t.Errorf("outbox: %s; want one DM to W0ALICE", sentTo(msgs))
		}
	})
}

// sentTo lists where messages went, for a failure message.
func sentTo(msgs []outbox.Message) string {
	var out []string
	for _, m := range msgs {
		out = append(out, m.Channel+" to "+m.To)
	}
	return "[" + strings.Join(out, ", ") + "]"
}
