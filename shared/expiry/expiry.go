// Package expiry is the step-expiry function's logic: DynamoDB's TTL deletes
// a step whose time ran out, the steps table's stream reports the removal,
// and this settles it (task back to working, Step Expired published) so a
// run and its owner are not left waiting on a step no one can decide.
package expiry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"

	"github.com/useprickle/prickle/shared/step"
	"github.com/useprickle/prickle/shared/store"
)

// Expirer settles an expired step; *team.Service is one.
type Expirer interface {
	ExpireStep(ctx context.Context, last step.Step) error
}

// Handler reads stream records of the steps table.
type Handler struct {
	Steps Expirer
}

// New builds the handler over the team service.
func New(steps Expirer) *Handler { return &Handler{Steps: steps} }

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
		if !ByTTL(r) {
			slog.DebugContext(ctx, "stream record is not a TTL removal; ignored", "record", r.EventID, "event", r.EventName)
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
