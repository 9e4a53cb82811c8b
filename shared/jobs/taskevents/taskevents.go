// Package taskevents is the task-events function's logic, reading the tasks
// table's stream: it files the history lines each move's task item carries
// (as the task's HIST items), and it makes the stored task move the outbox
// of its events.
// The writer publishes Task Routed, Result Returned, Approval Requested,
// Result Decided and Task Completed right after storing a move; a writer
// that crashed in between would lose them. Every stored move also reaches
// the stream, and this republishes the events it stands for, built by
// event.ForMove from the task version and its history line (carried on the
// record's new image) exactly as the writer built them, with the same IDs, so a target that already acted on
// an event skips the copy and one that never saw it acts now.
package taskevents

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"

	"github.com/useprickle/prickle/shared/aws/store"
	"github.com/useprickle/prickle/shared/domain/event"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/team"
)

// Lines files the history lines task items carry and reads one line of a
// task's history; *store.Store is one.
type Lines interface {
	FileLine(ctx context.Context, l store.Line) error
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

// Handle files the lines each record adds, oldest first, then republishes
// the events of every move in the batch. It tries every record and returns
// the failures together; the stream then retries the batch, which is safe
// because a filed line is not filed again and targets act on each event ID
// once.
func (h *Handler) Handle(ctx context.Context, e events.DynamoDBEvent) error {
	var errs []error
	published, filed := 0, 0
	for _, r := range e.Records {
		lines, err := store.AddedLines(r)
		if err != nil {
			errs = append(errs, fmt.Errorf("record %s: %w", r.EventID, err))
			continue
		}
		if err := h.file(ctx, lines); err != nil {
			errs = append(errs, fmt.Errorf("record %s: %w", r.EventID, err))
			continue
		}
		filed += len(lines)
		t, ok, err := Moved(r)
		if err != nil {
			errs = append(errs, fmt.Errorf("record %s: %w", r.EventID, err))
			continue
		}
		if !ok {
			continue
		}
		line, err := h.line(ctx, t, lines)
		if errors.Is(err, team.ErrNotFound) {
			// Every move stores its line with the task: a record without
			// one is not Prickle's (a hand-made or foreign item).
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
	slog.InfoContext(ctx, "tasks stream batch", "records", len(e.Records), "filed", filed, "republished", published, "failed", len(errs))
	if len(errs) > 0 {
		return fmt.Errorf("task events: %w", errors.Join(errs...))
	}
	return nil
}

// file stores lines in order and stops at the first failure, so a line is
// filed only after the older ones of its record.
func (h *Handler) file(ctx context.Context, lines []store.Line) error {
	for _, l := range lines {
		if err := h.Lines.FileLine(ctx, l); err != nil {
			return err
		}
	}
	return nil
}

// line is the history line of the version t: among the lines its record
// added (every move adds its own), else read (a record written before task
// items carried their lines).
func (h *Handler) line(ctx context.Context, t task.Task, added []store.Line) (task.Event, error) {
	for _, l := range added {
		if e := l.Event(); e.Seq == t.Version {
			return e, nil
		}
	}
	return h.Lines.HistoryLine(ctx, t.ID, t.Version)
}
