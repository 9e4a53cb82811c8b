package team

import (
	"context"
	"errors"
	"fmt"

	"github.com/useprickle/prickle/shared/domain/audit"
	"github.com/useprickle/prickle/shared/domain/event"
	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/domain/task"
)

// ExpireStep settles a step whose time ran out (DynamoDB TTL removed it, or
// a read found it late): the step becomes expired, a task waiting on its
// owner goes back to working, and Step Expired is published. Steps already
// decided, used or withdrawn are left alone, so a late or repeated record is harmless.
func (s *Service) ExpireStep(ctx context.Context, last step.Step) error {
	now := s.now()
	cur, err := s.Store.Step(ctx, last.TaskID, last.ID)
	switch {
	case errors.Is(err, ErrNotFound):
		cur = last // TTL deleted it: the old image is all there is.
	case err != nil:
		return fmt.Errorf("load step %s: %w", last.ID, err)
	}
	if cur.Status != step.Pending && cur.Status != step.Approved && cur.Status != step.Expired {
		return nil
	}
	expired := cur
	expired.Status = step.Expired
	change := StepChange{At: now}
	if cur.Status != step.Expired && err == nil {
		change.Steps = []StepWrite{{Step: expired, Prev: cur.Status}}
	} else if cur.Status != step.Expired {
		// TTL removed the step before any reader settled it: record the expiry here.
		s.audit(ctx, audit.ForStep(expired, cur.Status, now))
	}
	t, err := s.Store.Task(ctx, cur.TaskID)
	if err != nil {
		return fmt.Errorf("load task %s: %w", cur.TaskID, err)
	}
	if t.WaitingOnOwner() {
		others, err := s.Store.StepsForTask(ctx, t.ID)
		if err != nil {
			return fmt.Errorf("read steps of task %s: %w", t.ID, err)
		}
		stillPending := false
		for _, o := range others {
			if o.ID != cur.ID && o.Effective(now).Status == step.Pending {
				stillPending = true
			}
		}
		if change.Move = task.StepExpired(t, cur.ID, stillPending, now); change.Move != nil {
			change.PrevVersion = t.Version
		}
	}
	if len(change.Steps) > 0 || change.Move != nil {
		if err := s.Store.SaveSteps(ctx, change); err != nil {
			return fmt.Errorf("expire step %s: %w", cur.ID, err)
		}
	}
	s.publish(ctx, event.ForStep(event.StepExpired, expired, task.System, now))
	return nil
}
