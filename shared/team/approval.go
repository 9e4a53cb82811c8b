package team

import (
	"context"
	"errors"
	"fmt"

	"github.com/useprickle/prickle/shared/domain/audit"
	"github.com/useprickle/prickle/shared/domain/event"
	"github.com/useprickle/prickle/shared/domain/task"
)

// DecideResult records an owner's decision on a result that needs owner
// approval: approve completes the task with provenance owner_approved,
// refuse sends it back to working with the owner's message.
// round names the result the owner saw (task.ResultRound); a decision meant
// for an earlier result is refused with who decided that one. via says how
// the decision reached Prickle, for the audit trail.
func (s *Service) DecideResult(ctx context.Context, owner, taskID, round string, approve bool, message, via string) (task.Task, error) {
	t, err := s.Store.Task(ctx, taskID)
	if errors.Is(err, ErrNotFound) {
		return task.Task{}, task.Refusef("no task %s", taskID)
	}
	if err != nil {
		return task.Task{}, fmt.Errorf("load task %s: %w", taskID, err)
	}
	if t.State != task.Approval || task.ResultRound(t) != round {
		if by, at, ok := s.lastOwnerDecision(ctx, taskID); ok {
			return task.Task{}, task.Refusef("the result of task %s was already decided by %s at %s; the task is %s", taskID, by, at, t.State)
		}
		if t.State == task.Approval {
			return task.Task{}, task.Refusef("this approval is for an earlier result of task %s; use the link sent for the current one", taskID)
		}
	}
	m, err := task.DecideApproval(t, owner, approve, message, s.now())
	if err != nil {
		return task.Task{}, err
	}
	if err := s.storeMove(ctx, t, &m, "store owner decision on task"); err != nil {
		return task.Task{}, err
	}
	action := audit.ResultRefused
	if approve {
		action = audit.ResultApproved
	}
	detail := fmt.Sprintf("result of %s (%s) returned at %s; task now %s", t.Assignee, t.Packet.DeliverableType, round, m.Task.State)
	if message != "" {
		detail += fmt.Sprintf("; message: %q", message)
	}
	s.audit(ctx, audit.Entry{At: m.Event.At, Project: t.Project, Action: action, Actor: "owner:" + owner, Via: via,
		TaskID: t.ID, Detail: detail, Key: fmt.Sprintf("%s#result#%d", t.ID, m.Task.Version)})
	s.publish(ctx, event.ForMove(m.Task, m.Event)...)
	if m.Task.State == task.Completed {
		s.routeAfter(ctx, m.Task)
	}
	return m.Task, nil
}

// lastOwnerDecision finds who last approved or refused the task's result, and when.
func (s *Service) lastOwnerDecision(ctx context.Context, taskID string) (by, at string, ok bool) {
	h, err := s.Store.History(ctx, taskID)
	if err != nil {
		return "", "", false
	}
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].Action == "owner_approve" || h[i].Action == "owner_refuse" {
			return h[i].By, h[i].At.Format("2006-01-02T15:04:05Z07:00"), true
		}
	}
	return "", "", false
}
