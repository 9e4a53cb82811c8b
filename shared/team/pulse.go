package team

import (
	"context"
	"fmt"

	"github.com/useprickle/prickle/shared/identity"
	"github.com/useprickle/prickle/shared/pulse"
	"github.com/useprickle/prickle/shared/task"
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
	if in.TaskID != "" {
		t, err := s.visibleTask(ctx, c, in.TaskID)
		if err != nil {
			return UpdatePulseOutput{}, err
		}
		if t.Project != in.Project {
			return UpdatePulseOutput{}, task.Refusef("task %s belongs to project %s, not %s", t.ID, t.Project, in.Project)
		}
		e.TaskID = &in.TaskID
	}
	if err := s.Store.PutPulse(ctx, e); err != nil {
		return UpdatePulseOutput{}, fmt.Errorf("store pulse of %s: %w", c.Agent, err)
	}
	return UpdatePulseOutput{Pulse: e}, nil
}
