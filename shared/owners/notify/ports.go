// Package notify tells owners what their agents ask and what happened to it:
// an email and a Slack message with the exact call (or the result) and a
// signed approval link when a step or a result waits for them, and an update
// (Slack edited in place, a short email) once it is decided or expired. It
// reacts to the bus's events through small ports: who the owner is, how to
// send, and a ledger that makes each event's messages go out once.
package notify

import (
	"context"
	"encoding/json"
	"time"

	"github.com/useprickle/prickle/shared/team"
)

// Owners finds where an owner's messages go; *store.Store satisfies it.
type Owners interface {
	Owner(ctx context.Context, name string) (team.Owner, error)
}

// Ledger remembers what was sent so a redelivered event sends nothing twice,
// and which Slack message to edit when a decision comes; *store.Store satisfies it.
type Ledger interface {
	// ClaimSend is true only for the first claim of (event, channel).
	ClaimSend(ctx context.Context, eventID, channel string, now time.Time) (bool, error)
	// ReleaseSend undoes a claim whose send failed, so the retried event sends it.
	ReleaseSend(ctx context.Context, eventID, channel string) error
	// PutSlackRef stores the Slack message of a step (subject = step id) or a result (subject = "RESULT").
	PutSlackRef(ctx context.Context, taskID, subject, channel, ts string) error
	// SlackRef finds it again; team.ErrNotFound when none was posted.
	SlackRef(ctx context.Context, taskID, subject string) (channel, ts string, err error)
}

// Email is one plain-text email to an owner; the JSON names are what the dev outbox shows as its body.
type Email struct {
	To      string   `json:"to"`
	Subject string   `json:"subject"`
	Text    string   `json:"text"`
	Links   []string `json:"links"`
}

// Mailer sends emails: SES in the cloud, the dev outbox locally.
type Mailer interface {
	SendEmail(ctx context.Context, e Email) error
}

// SlackMessage is one Slack message: Text is the notification fallback,
// Blocks the Block Kit layout; Subject and Links are for logs and the dev outbox.
type SlackMessage struct {
	Channel string          `json:"channel"`
	Subject string          `json:"subject"`
	Text    string          `json:"text"`
	Blocks  json.RawMessage `json:"blocks,omitempty"`
	Links   []string        `json:"links"`
}

// MessageRef names a posted Slack message so chat.update can edit it.
type MessageRef struct {
	Channel string `json:"channel"`
	TS      string `json:"ts"`
}

// Slack posts and edits messages: the Web API in the cloud, the dev outbox locally.
type Slack interface {
	Post(ctx context.Context, m SlackMessage) (MessageRef, error)
	Update(ctx context.Context, ref MessageRef, m SlackMessage) error
}
