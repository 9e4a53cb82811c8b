// Package taskstream is the task-events function's logic, reading the tasks
// table's stream: it makes the stored task move the outbox of its events.
// The writer publishes Task Routed, Result Returned, Approval Requested,
// Result Decided and Task Completed right after storing a move; a writer
// that crashed in between would lose them. Every stored move also reaches
// the stream, and this republishes the events it stands for, built by
// event.ForMove from the task version and its history line exactly as the
// writer built them, with the same IDs, so a target that already acted on
// an event skips the copy and one that never saw it acts now.
package taskstream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"

	"github.com/useprickle/prickle/shared/event"
	"github.com/useprickle/prickle/shared/store"
	"github.com/useprickle/prickle/shared/task"
	"github.com/useprickle/prickle/shared/team"
)

// Lines reads one line of a task's history; *store.Store is one.
type Lines interface {
	HistoryLine(ctx context.Context, taskID string, seq int) (task.Event, error)
}

// Handler reads stream records of the tasks table.
type Handler struct {
	Lines  Lines
	Events event.Publisher
}

// New builds the handler over the store's history and the bus it publishes on.
func New(lines Lines, events event.Publisher) *Handler {
	return &Handler{Lines: lines, Events: events}
}

// Moved reports the task version a stream record stores when the record is
// a task move: a task item inserted, or modified to a higher version.
// History lines and the table's other items are not moves.
func Moved(r events.DynamoDBEventRecord) (task.Task, bool, error) {
	switch r.EventName {
	case string(events.DynamoDBOperationTypeInsert), string(events.DynamoDBOperationTypeModify):
	default:
		return task.Task{}, false, nil
	}
	t, ok, err := store.TaskFromImage(r.Change.NewImage)
	if err != nil || !ok {
		return task.Task{}, false, err
	}
	if len(r.Change.OldImage) > 0 {
		old, wasTask, err := store.TaskFromImage(r.Change.OldImage)
		if err != nil {
			return task.Task{}, false, err
		}
		if wasTask && old.Version >= t.Version {
			return task.Task{}, false, nil
		}
	}
	return t, true, nil
}

// Handle republishes the events of every move in the batch. It tries every
// record and returns the failures together; the stream then retries the
// batch, which is safe because targets act on each event ID once.
func (h *Handler) Handle(ctx context.Context, e events.DynamoDBEvent) error {
	var errs []error
	published := 0
	for _, r := range e.Records {
		t, ok, err := Moved(r)
		if err != nil {
			errs = append(errs, fmt.Errorf("record %s: %w", r.EventID, err))
			continue
		}
		if !ok {
			continue
		}
		line, err := h.Lines.HistoryLine(ctx, t.ID, t.Version)
		if errors.Is(err, team.ErrNotFound) {
			// Every move stores its line in the same transaction: a record
			// without one is not Prickle's (a hand-made or foreign item).
			slog.WarnContext(ctx, "stream record of a task version without its history line; nothing to republish", "record", r.EventID, "task", t.ID, "version", t.Version)
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("record %s: %w", r.EventID, err))
			continue
		}
		evs := event.ForMove(t, line)
		if len(evs) == 0 {
			continue
		}
		if err := h.Events.Publish(ctx, evs...); err != nil {
			errs = append(errs, fmt.Errorf("record %s: republish the events of task %s version %d: %w", r.EventID, t.ID, t.Version, err))
			continue
		}
		published += len(evs)
	}
	slog.InfoContext(ctx, "tasks stream batch", "records", len(e.Records), "republished", published, "failed", len(errs))
	if len(errs) > 0 {
		return fmt.Errorf("task events: %w", errors.Join(errs...))
	}
	return nil
}
