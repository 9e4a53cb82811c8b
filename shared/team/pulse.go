package team

import (
	"context"
	"errors"
	"fmt"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/domain/pulse"
	"github.com/useprickle/prickle/shared/domain/task"
)

// UpdatePulse stores what the caller is doing now in a project's Team Pulse.
func (s *Service) UpdatePulse(ctx context.Context, c identity.Caller, in UpdatePulseInput) (UpdatePulseOutput, error) {
	if err := s.joined(ctx, c, in.Project); err != nil {
		return UpdatePulseOutput{}, err
	}
	e := pulse.Entry{
		AgentID: c.Agent, Owner: c.Owner, Project: in.Project,
		Availability: in.Availability, Doing: in.Doing,
		Branch: in.Branch, Files: orEmpty(in.Files), LastDecision: in.LastDecision,
		UpdatedAt: s.now(),
	}
	if e.Availability == "" {
		e.Availability = "working"
	}
	if in.TaskID == "" {
		if err := s.Store.PutPulse(ctx, e); err != nil {
			return UpdatePulseOutput{}, fmt.Errorf("store pulse of %s: %w", c.Agent, err)
		}
		return UpdatePulseOutput{Pulse: e}, nil
	}
	// The caller belongs to in.Project and the write checks that the task is
	// in it, so the task is visible: no read of it unless the check fails.
	e.TaskID = &in.TaskID
	err := s.Store.PutTaskPulse(ctx, e)
	if errors.Is(err, ErrConflict) {
		return UpdatePulseOutput{}, s.pulseTaskRefusal(ctx, c, in)
	}
	if err != nil {
		return UpdatePulseOutput{}, fmt.Errorf("store pulse of %s on task %s: %w", c.Agent, in.TaskID, err)
	}
	return UpdatePulseOutput{Pulse: e}, nil
}

// pulseTaskRefusal says why a pulse naming a task was not stored: the task
// is not one the caller may see, or it belongs to another of its projects.
func (s *Service) pulseTaskRefusal(ctx context.Context, c identity.Caller, in UpdatePulseInput) error {
	t, err := s.visibleTask(ctx, c, in.TaskID)
	if err != nil {
		return err
	}
	if t.Project != in.Project {
		return task.Refusef("task %s belongs to project %s, not %s", t.ID, t.Project, in.Project)
	}
	return fmt.Errorf("store pulse of %s on task %s: %w", c.Agent, in.TaskID, ErrConflict)
}
