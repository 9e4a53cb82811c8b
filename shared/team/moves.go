package team

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/domain/task"
)

// AcceptTask takes a routed task; only its assignee may.
func (s *Service) AcceptTask(ctx context.Context, c identity.Caller, in AcceptInput) (TaskOutput, error) {
	t, err := s.transition(ctx, c, in.TaskID, false, func(t task.Task, _ Project, now time.Time) (task.Move, error) {
		return task.Accept(t, c.Agent, in.Note, now)
	})
	return TaskOutput{Task: t}, err
}

// DeclineTask turns a routed or accepted task down; only its assignee may.
func (s *Service) DeclineTask(ctx context.Context, c identity.Caller, in DeclineInput) (TaskOutput, error) {
	t, err := s.transition(ctx, c, in.TaskID, false, func(t task.Task, _ Project, now time.Time) (task.Move, error) {
		return task.Decline(t, c.Agent, in.Reason, now)
	})
	return TaskOutput{Task: t}, err
}

// SaveCheckpoint records the assignee's progress.
func (s *Service) SaveCheckpoint(ctx context.Context, c identity.Caller, in CheckpointInput) (TaskOutput, error) {
	cp := task.Checkpoint{
		Progress: in.Progress, Decisions: orEmpty(in.Decisions), FilesTouched: orEmpty(in.FilesTouched),
		NextSteps: orEmpty(in.NextSteps), OpenQuestions: orEmpty(in.OpenQuestions),
	}
	t, err := s.transition(ctx, c, in.TaskID, false, func(t task.Task, _ Project, now time.Time) (task.Move, error) {
		return task.SaveCheckpoint(t, c.Agent, cp, in.WaitingOn, now)
	})
	return TaskOutput{Task: t}, err
}

// ReturnResult hands the result and its evidence to the requester.
func (s *Service) ReturnResult(ctx context.Context, c identity.Caller, in ReturnResultInput) (TaskOutput, error) {
	r := task.Result{Summary: in.Summary, Evidence: in.Evidence, Provenance: in.Provenance}
	if r.Provenance == "" {
		r.Provenance = task.ProvenanceAgentGenerated
	}
	t, err := s.transition(ctx, c, in.TaskID, false, func(t task.Task, _ Project, now time.Time) (task.Move, error) {
		return task.ReturnResult(t, c.Agent, r, now)
	})
	return TaskOutput{Task: t}, err
}

// ReviewResult applies the requester's verdict; a completed task routes its dependents.
func (s *Service) ReviewResult(ctx context.Context, c identity.Caller, in ReviewInput) (TaskOutput, error) {
	return s.review(ctx, c, in, nil)
}

// review is ReviewResult; by, when set, says who did it for the caller in
// the history line (an owner on the task page, see ReviewOnBoard).
func (s *Service) review(ctx context.Context, c identity.Caller, in ReviewInput, by *OwnerAct) (TaskOutput, error) {
	var line task.Event
	t, err := s.transition(ctx, c, in.TaskID, true, func(t task.Task, p Project, now time.Time) (task.Move, error) {
		needsOwner := slices.Contains(p.OwnerApprovalTypes, t.Packet.DeliverableType)
		m, err := task.Review(t, c.Agent, in.Verdict, in.Feedback, needsOwner, now)
		if err == nil && by != nil {
			by.mark(&m.Event, in.Feedback)
		}
		line = m.Event
		return m, err
	})
	if err != nil {
		return TaskOutput{}, err
	}
	if by != nil {
		detail := fmt.Sprintf("as %s: %s the result of %s; task now %s", c.Agent, in.Verdict, t.Assignee, t.State)
		if in.Feedback != "" {
			detail += fmt.Sprintf("; feedback: %q", in.Feedback)
		}
		s.audit(ctx, by.entry(t, line, detail))
	}
	if t.State == task.Completed {
		s.routeAfter(ctx, t)
	}
	return TaskOutput{Task: t}, nil
}

// routeAfter routes the dependents of a task that just completed at once;
// the route function does the same on Task Completed, so a failure here is
// retried there rather than reported to the caller, whose change is stored.
func (s *Service) routeAfter(ctx context.Context, t task.Task) {
	if err := s.RouteDependents(ctx, t.Project, t.ID); err != nil {
		slog.ErrorContext(ctx, "route dependents failed; the route function retries on Task Completed", "task", t.ID, "error", err.Error())
	}
}

// CancelTask ends an open task; only its requester may.
func (s *Service) CancelTask(ctx context.Context, c identity.Caller, in CancelInput) (TaskOutput, error) {
	t, err := s.transition(ctx, c, in.TaskID, false, func(t task.Task, _ Project, now time.Time) (task.Move, error) {
		return task.Cancel(t, c.Agent, in.Reason, now)
	})
	return TaskOutput{Task: t}, err
}
