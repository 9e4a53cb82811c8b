package notify

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/useprickle/prickle/shared/auth/session"
	"github.com/useprickle/prickle/shared/domain/event"
	"github.com/useprickle/prickle/shared/team"
)

// signInRequested sends an owner a sign-in link where it reaches the owner
// alone: the owner's email, and in Slack a direct message to the owner's
// member id (chat.postMessage with the member id as the channel), never the
// owner's Slack channel, which others read. Each destination gets its own
// link, minted here from the key the web pages verify it with (so it never
// travels on the bus) and saying, signed, where it was sent. An unknown
// owner, or one with neither an email nor a member id, gets nothing.
func (n *Notifier) signInRequested(ctx context.Context, e event.Event) error {
	o, ok, err := n.owner(ctx, e, e.Owner)
	if !ok {
		return err
	}
	if n.Mail == nil && n.Slack == nil {
		return fmt.Errorf("notify %s: no channel is configured to send %s a sign-in link", e.ID, o.Name)
	}
	keys, err := session.NewKeys(n.Signer.Key)
	if err != nil {
		return fmt.Errorf("notify %s: %w", e.ID, err)
	}
	now := n.now()
	sent := func(via string) message {
		url := strings.TrimSuffix(n.BaseURL, "/") + "/signin/" + keys.SignInToken(o.Name, via, now)
		until := now.Add(session.LinkLifetime).Format(time.RFC3339)
		m := message{
			subject: "Sign in to Prickle as " + o.Name,
			text: fmt.Sprintf("Open this link to sign in to Prickle as %s. It works once, until %s (%d minutes):\n\n%s\n\n"+
				"If you did not ask for it, ignore this message: nothing happens unless the link is opened and its button pressed.", o.Name, until, int(session.LinkLifetime/time.Minute), url),
			links: []string{url},
		}
		m.blocks = []any{map[string]any{"type": "section", "text": map[string]any{"type": "mrkdwn", "text": fmt.Sprintf("<%s|Sign in to Prickle as %s> (works once, for %d minutes)", url, o.Name, int(session.LinkLifetime/time.Minute))}}}
		return m
	}
	dm := n.Slack != nil && team.ValidSlackUserID(o.SlackUserID)
	if !dm && (n.Mail == nil || o.Email == "") {
		n.log().WarnContext(ctx, "notify: the owner has no email and no Slack member id, no sign-in link sent", "event", e.ID, "owner", o.Name)
		return nil
	}
	slack := func() error {
		if !dm {
			return nil
		}
		return n.once(ctx, e, ChannelSlack, func() error {
			_, err := n.Slack.Post(ctx, sent(session.ViaSlackDM).slack(o.SlackUserID))
			return err
		})
	}
	return errors.Join(n.email(ctx, e, o, sent(session.ViaEmail)), slack())
}
