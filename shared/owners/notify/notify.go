package notify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/useprickle/prickle/shared/auth/link"
	"github.com/useprickle/prickle/shared/domain/event"
	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/team"
)

// Channels a notification goes out on; also the sort keys of the ledger's sent markers.
const (
	ChannelEmail = "email"
	ChannelSlack = "slack"
)

// ResultSubject names a task's result in the ledger where a step id names a step.
const ResultSubject = "RESULT"

// Notifier turns events into owners' messages. Mail or Slack nil turns that channel off.
type Notifier struct {
	Owners Owners
	Ledger Ledger
	Mail   Mailer
	Slack  Slack
	// Signer signs the approval links; BaseURL is where the web pages are (PUBLIC_BASE_URL).
	Signer  link.Signer
	BaseURL string
	Now     func() time.Time
	Log     *slog.Logger
}

// Handle sends the messages one event calls for. It is safe to call twice
// with the same event: each (event, channel) is claimed in the ledger before
// sending, and released if the send fails so that the retry sends it. An
// error means "retry me" (EventBridge redelivers); events notify does not
// handle are ignored.
func (n *Notifier) Handle(ctx context.Context, e event.Event) error {
	switch e.Type {
	case event.StepRequested:
		return n.stepRequested(ctx, e)
	case event.StepDecided, event.StepExpired:
		return n.stepSettled(ctx, e)
	case event.ApprovalRequested:
		return n.approvalRequested(ctx, e)
	case event.ResultDecided:
		return n.resultDecided(ctx, e)
	case event.SignInRequested:
		return n.signInRequested(ctx, e)
	case event.ModelCapReached:
		return n.capReached(ctx, e)
	}
	n.log().InfoContext(ctx, "notify: event ignored", "event", e.ID, "type", string(e.Type))
	return nil
}

func (n *Notifier) now() time.Time {
	if n.Now == nil {
		return time.Now().UTC()
	}
	return n.Now().UTC()
}

func (n *Notifier) log() *slog.Logger {
	if n.Log == nil {
		return slog.Default()
	}
	return n.Log
}

// ownerOf is the owner part of an owner/agent id.
func ownerOf(agent string) string {
	owner, _, _ := strings.Cut(agent, "/")
	return owner
}

// owner loads an owner; ok is false (and err nil) when there is no such
// owner, since redelivering the event would not create one.
func (n *Notifier) owner(ctx context.Context, e event.Event, name string) (team.Owner, bool, error) {
	o, err := n.Owners.Owner(ctx, name)
	if errors.Is(err, team.ErrNotFound) {
		n.log().WarnContext(ctx, "notify: no such owner, nothing sent", "event", e.ID, "owner", name)
		return team.Owner{}, false, nil
	}
	if err != nil {
		return team.Owner{}, false, fmt.Errorf("notify %s: load owner %s: %w", e.ID, name, err)
	}
	return o, true, nil
}

func (n *Notifier) stepRequested(ctx context.Context, e event.Event) error {
	s, o, ok, err := n.stepOwner(ctx, e)
	if !ok {
		return err
	}
	claims := link.ForStep(s.TaskID, s.ID, o.Name, s.ExpiresAt)
	return n.ask(ctx, e, o, claims, s.TaskID, s.ID, func(token string) message {
		return stepRequestMessage(s, token, link.URL(n.BaseURL, token), s.ExpiresAt)
	})
}

func (n *Notifier) stepSettled(ctx context.Context, e event.Event) error {
	s, o, ok, err := n.stepOwner(ctx, e)
	if !ok {
		return err
	}
	if e.Type == event.StepExpired {
		s.Status = step.Expired
	}
	return n.settled(ctx, e, o, s.TaskID, s.ID, stepSettledMessage(s))
}

func (n *Notifier) approvalRequested(ctx context.Context, e event.Event) error {
	t, o, ok, err := n.taskOwner(ctx, e)
	if !ok {
		return err
	}
	claims := link.ForResult(t.ID, task.ResultRound(t), o.Name, n.now())
	return n.ask(ctx, e, o, claims, t.ID, ResultSubject, func(token string) message {
		return approvalRequestMessage(t, token, link.URL(n.BaseURL, token), claims.Expires)
	})
}

func (n *Notifier) resultDecided(ctx context.Context, e event.Event) error {
	t, o, ok, err := n.taskOwner(ctx, e)
	if !ok {
		return err
	}
	by := strings.TrimPrefix(e.Actor, "owner:")
	return n.settled(ctx, e, o, t.ID, ResultSubject, resultSettledMessage(t, by, e.At))
}

// stepOwner is the event's step and the owner of its agent; ok is false
// when there is nothing to send: err says why, or is nil for no such owner.
func (n *Notifier) stepOwner(ctx context.Context, e event.Event) (step.Step, team.Owner, bool, error) {
	if e.Step == nil {
		return step.Step{}, team.Owner{}, false, fmt.Errorf("notify %s: the event carries no step", e.ID)
	}
	o, ok, err := n.owner(ctx, e, ownerOf(e.Step.Agent))
	return *e.Step, o, ok, err
}

// taskOwner is the event's task and the owner of its assignee, as stepOwner.
func (n *Notifier) taskOwner(ctx context.Context, e event.Event) (task.Task, team.Owner, bool, error) {
	if e.Task == nil {
		return task.Task{}, team.Owner{}, false, fmt.Errorf("notify %s: the event carries no task", e.ID)
	}
	o, ok, err := n.owner(ctx, e, ownerOf(e.Task.Assignee))
	return *e.Task, o, ok, err
}

// settled tells the owner how a question was settled: by email, and by
// editing the Slack message that asked it (kept under key and subject).
func (n *Notifier) settled(ctx context.Context, e event.Event, o team.Owner, key, subject string, m message) error {
	return errors.Join(
		n.email(ctx, e, o, m),
		n.updateSlack(ctx, e, o, key, subject, m),
	)
}

// once sends on one channel at most once per event.
func (n *Notifier) once(ctx context.Context, e event.Event, channel string, send func() error) error {
	first, err := n.Ledger.ClaimSend(ctx, e.ID, channel, n.now())
	if err != nil {
		return fmt.Errorf("notify %s by %s: %w", e.ID, channel, err)
	}
	if !first {
		n.log().InfoContext(ctx, "notify: already sent", "event", e.ID, "channel", channel)
		return nil
	}
	if err := send(); err != nil {
		if rerr := n.Ledger.ReleaseSend(context.WithoutCancel(ctx), e.ID, channel); rerr != nil {
			err = errors.Join(err, rerr)
		}
		return fmt.Errorf("notify %s by %s: %w", e.ID, channel, err)
	}
	n.log().InfoContext(ctx, "notify: sent", "event", e.ID, "type", string(e.Type), "channel", channel, "task", e.TaskID)
	return nil
}

// ask sends the owner a question with a link to decide it, by email and
// in Slack: each destination gets its own link, signed with where it went
// (link.Claims.DeliveredBy), and build writes the message around it. The
// Slack message is kept under (key, subject) to be edited once decided.
func (n *Notifier) ask(ctx context.Context, e event.Event, o team.Owner, claims link.Claims, key, subject string, build func(token string) message) error {
	sent := func(via string) message { return build(n.Signer.Sign(claims.DeliveredBy(via))) }
	return errors.Join(
		n.email(ctx, e, o, sent(link.ViaEmail)),
		n.postSlack(ctx, e, o, key, subject, sent(link.ViaSlack)),
	)
}

func (n *Notifier) email(ctx context.Context, e event.Event, o team.Owner, m message) error {
	if n.Mail == nil || o.Email == "" {
		return nil
	}
	return n.once(ctx, e, ChannelEmail, func() error { return n.Mail.SendEmail(ctx, m.email(o.Email)) })
}

// postSlack posts a new message and remembers it, so the decision can edit it.
func (n *Notifier) postSlack(ctx context.Context, e event.Event, o team.Owner, taskID, subject string, m message) error {
	if n.Slack == nil || o.SlackChannel == "" {
		return nil
	}
	return n.once(ctx, e, ChannelSlack, func() error {
		ref, err := n.Slack.Post(ctx, m.slack(o.SlackChannel))
		if err != nil {
			return err
		}
		if err := n.Ledger.PutSlackRef(ctx, taskID, subject, ref.Channel, ref.TS); err != nil {
			// The message is out; without its ref the decision posts a new one instead of editing it.
			n.log().ErrorContext(ctx, "notify: slack message ref not stored", "event", e.ID, "error", err.Error())
		}
		return nil
	})
}

// updateSlack edits the message that asked, in place; when none was posted
// (Slack was off or failed then) it posts the outcome as a new message.
func (n *Notifier) updateSlack(ctx context.Context, e event.Event, o team.Owner, taskID, subject string, m message) error {
	if n.Slack == nil || o.SlackChannel == "" {
		return nil
	}
	return n.once(ctx, e, ChannelSlack, func() error {
		channel, ts, err := n.Ledger.SlackRef(ctx, taskID, subject)
		if errors.Is(err, team.ErrNotFound) {
			_, err := n.Slack.Post(ctx, m.slack(o.SlackChannel))
			return err
		}
		if err != nil {
			return err
		}
		return n.Slack.Update(ctx, MessageRef{Channel: channel, TS: ts}, m.slack(channel))
	})
}
