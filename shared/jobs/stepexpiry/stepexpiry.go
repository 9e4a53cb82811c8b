// Package stepexpiry is the step-expiry function's logic, reading the steps
// table's stream. DynamoDB's TTL deletes a step whose time ran out, the
// stream reports the removal, and this settles it (task back to working,
// Step Expired published) so a run and its owner are not left waiting on a
// step no one can decide. The stream also carries every step asked and
// decided: republishing those (Step Requested, Step Decided, with the IDs the
// writer used, so targets act once) makes the stored step the outbox, and a
// writer that crashed between storing a decision and publishing it loses nothing.
package stepexpiry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"

	"github.com/useprickle/prickle/shared/aws/store"
	"github.com/useprickle/prickle/shared/domain/event"
	"github.com/useprickle/prickle/shared/domain/step"
)

// Expirer settles an expired step; *team.Service is one.
type Expirer interface {
	ExpireStep(ctx context.Context, last step.Step) error
}

// Handler reads stream records of the steps table.
type Handler struct {
	Steps  Expirer
	Events event.Publisher
}

// New builds the handler over the team service and the bus it publishes on.
func New(steps Expirer, events event.Publisher) *Handler {
	return &Handler{Steps: steps, Events: events}
}

// ByTTL reports whether a stream record is a removal made by DynamoDB's TTL
// (the service principal), not by a writer: only those are expiries. The
// template's filter keeps only these already; checking again keeps a
// misconfigured filter from expiring steps a user deleted.
func ByTTL(r events.DynamoDBEventRecord) bool {
	return r.EventName == string(events.DynamoDBOperationTypeRemove) &&
		r.UserIdentity != nil && r.UserIdentity.Type == "Service" &&
		r.UserIdentity.PrincipalID == "dynamodb.amazonaws.com"
}

// Handle settles the steps TTL removed and ignores every other record. It
// tries every record and returns the failures together; the stream then
// retries the batch, which is safe because ExpireStep is idempotent.
func (h *Handler) Handle(ctx context.Context, e events.DynamoDBEvent) error {
	var errs []error
	for _, r := range e.Records {
		if ev, ok, err := Republished(r); err != nil {
			errs = append(errs, fmt.Errorf("record %s: %w", r.EventID, err))
			continue
		} else if ok {
			if err := h.Events.Publish(ctx, ev); err != nil {
				errs = append(errs, fmt.Errorf("record %s: republish %s: %w", r.EventID, ev.ID, err))
			}
			continue
		}
		if !ByTTL(r) {
			slog.DebugContext(ctx, "stream record is neither a TTL removal nor a step asked or decided; ignored", "record", r.EventID, "event", r.EventName)
			continue
		}
		s, err := store.StepFromImage(r.Change.OldImage)
		if err != nil {
			errs = append(errs, fmt.Errorf("record %s: %w", r.EventID, err))
			continue
		}
		if err := h.Steps.ExpireStep(ctx, s); err != nil {
			errs = append(errs, fmt.Errorf("record %s: expire step %s of task %s: %w", r.EventID, s.ID, s.TaskID, err))
			continue
		}
		slog.InfoContext(ctx, "step expired by TTL", "record", r.EventID, "task", s.TaskID, "step", s.ID, "status", string(s.Status))
	}
	if len(errs) > 0 {
		return fmt.Errorf("step expiry: %w", errors.Join(errs...))
	}
	return nil
}

// Republished is the event a stream record of a step asked (INSERT of a
// pending step) or decided (MODIFY from pending to approved or refused)
// stands for, built exactly as the writer built it, so its ID is the same
// and every target that already acted on it skips it.
func Republished(r events.DynamoDBEventRecord) (event.Event, bool, error) {
	switch r.EventName {
	case string(events.DynamoDBOperationTypeInsert):
		s, err := store.StepFromImage(r.Change.NewImage)
		if err != nil || s.Status != step.Pending {
			return event.Event{}, false, err
		}
		return event.ForStep(event.StepRequested, s, s.Agent, s.CreatedAt), true, nil
	case string(events.DynamoDBOperationTypeModify):
		old, err := store.StepFromImage(r.Change.OldImage)
		if err != nil {
			return event.Event{}, false, err
		}
		s, err := store.StepFromImage(r.Change.NewImage)
		if err != nil {
			return event.Event{}, false, err
		}
		if old.Status != step.Pending || (s.Status != step.Approved && s.Status != step.Refused) || s.DecidedAt == nil {
			return event.Event{}, false, nil
		}
		return event.ForStep(event.StepDecided, s, "owner:"+s.DecidedBy, *s.DecidedAt), true, nil
	}
	return event.Event{}, false, nil
}
