package team

import (
	"context"
	"errors"
	"fmt"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/domain/pulse"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/kit/plaintext"
)

// UpdatePulse stores what the caller is doing now in a project's Team Pulse.
func (s *Service) UpdatePulse(ctx context.Context, c identity.Caller, in UpdatePulseInput) (UpdatePulseOutput, error) {
	if err := pulseNames(in); err != nil {
		return UpdatePulseOutput{}, err
	}
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

// pulseNames refuses, before anything is read or stored, a file or branch
// name that holds a character that could hide or reorder what Team Pulse
// shows (plaintext.Spoofs); task_id is patterned by the schema.
func pulseNames(in UpdatePulseInput) error {
	const rule = "names on Team Pulse take no control, line-break or bidirectional format characters; nothing was stored"
	for i, f := range in.Files {
		if bad := plaintext.Check(f); bad != "" {
			return task.Refusef("files[%d] holds %s: %s", i, bad, rule)
		}
	}
	if in.Branch != nil {
		if bad := plaintext.Check(*in.Branch); bad != "" {
			return task.Refusef("branch holds %s: %s", bad, rule)
		}
	}
	return nil
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
