package notify

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/useprickle/prickle/shared/event"
	"github.com/useprickle/prickle/shared/session"
)

// signInRequested sends an owner a sign-in link on every channel it has.
// The link is minted here, from the same key the web pages verify it with,
// so it never travels on the bus; an unknown owner gets nothing.
func (n *Notifier) signInRequested(ctx context.Context, e event.Event) error {
	o, ok, err := n.owner(ctx, e, e.Owner)
	if !ok {
		return err
	}
	keys, err := session.NewKeys(n.Signer.Key)
	if err != nil {
		return fmt.Errorf("notify %s: %w", e.ID, err)
	}
	now := n.now()
	url := strings.TrimSuffix(n.BaseURL, "/") + "/signin/" + keys.SignInToken(o.Name, now)
	until := now.Add(session.LinkLifetime).Format(time.RFC3339)
	m := message{
		subject: "Sign in to Prickle as " + o.Name,
		text: fmt.Sprintf("Open this link to sign in to Prickle as %s. It works once, until %s (15 minutes):\n\n%s\n\n"+
			"If you did not ask for it, ignore this message: nothing happens unless the link is opened and its button pressed.", o.Name, until, url),
		links: []string{url},
	}
	m.blocks = []any{map[string]any{"type": "section", "text": map[string]any{"type": "mrkdwn", "text": fmt.Sprintf("<%s|Sign in to Prickle as %s> (works once, for 15 minutes)", url, o.Name)}}}
	if n.Mail == nil && n.Slack == nil {
		return fmt.Errorf("notify %s: no channel is configured to send %s a sign-in link", e.ID, o.Name)
	}
	slack := func() error {
		if n.Slack == nil || o.SlackChannel == "" {
			return nil
		}
		return n.once(ctx, e, ChannelSlack, func() error {
			_, err := n.Slack.Post(ctx, m.slack(o.SlackChannel))
			return err
		})
	}
	return errors.Join(n.email(ctx, e, o, m), slack())
}
