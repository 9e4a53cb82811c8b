package team

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/useprickle/prickle/shared/domain/event"
	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/domain/task"
)

// DecideStep records an owner's answer to a pending step and puts the task
// back to work; via says how it reached Prickle (audit.ViaLink, ViaPage, …).
// edited, with an approval only, is the call as the owner edited it: it is
// bounded as request_step's input is, stored beside the call as asked, and
// is what the run is allowed (an edit that changes nothing of the call is
// an approval as asked).
func (s *Service) DecideStep(ctx context.Context, owner, taskID, stepID string, approve bool, edited json.RawMessage, message, via string) (step.Step, error) {
	if edited != nil && !approve {
		return step.Step{}, task.Refusef("an edited call is approved, not refused: refuse the call as asked, or approve your edit; nothing was decided")
	}
	var edit []byte
	if edited != nil {
		// Bounded before anything else reads it, as request_step's input is.
		var err error
		if edit, err = step.CheckInput(edited); err != nil {
			return step.Step{}, editRefusal(err)
		}
	}
	st, err := s.Store.Step(ctx, taskID, stepID)
	if errors.Is(err, ErrNotFound) {
		return step.Step{}, task.Refusef("no step %s on task %s", stepID, taskID)
	}
	if err != nil {
		return step.Step{}, fmt.Errorf("load step %s: %w", stepID, err)
	}
	a, err := s.Store.Agent(ctx, st.Agent)
	if err != nil {
		return step.Step{}, fmt.Errorf("load agent %s: %w", st.Agent, err)
	}
	if a.Owner != owner {
		return step.Step{}, task.Refusef("step %s was asked by %s, whose owner is %s, not %s", stepID, st.Agent, a.Owner, owner)
	}
	now := s.now()
	if eff := st.Effective(now); eff.Status != step.Pending {
		return step.Step{}, AlreadyDecided(eff)
	}
	decided := st
	decided.DecidedBy, decided.DecidedAt, decided.Message, decided.DecidedVia = owner, &now, message, via
	if edit != nil && st.ChangedBy(edit) {
		decided.Edited = edit
	}
	decided.Status = step.Refused
	if approve {
		decided.Status = step.Approved
		decided.ExpiresAt = now.Add(step.UseWindow)
	}
	change := StepChange{Steps: []StepWrite{{Step: decided, Prev: step.Pending}}, At: now}
	if approve {
		if change.Spend, err = s.approvedSpend(ctx, st, now); err != nil {
			return step.Step{}, err
		}
	}
	t, err := s.Store.Task(ctx, taskID)
	if err != nil {
		return step.Step{}, fmt.Errorf("load task %s: %w", taskID, err)
	}
	verdict := string(decided.Status)
	if len(decided.Edited) > 0 {
		verdict = "approved an edit of"
	}
	if change.Move, err = task.StepDecided(t, owner, verdict, stepID, now); err != nil {
		return step.Step{}, err
	}
	if change.Move != nil {
		change.PrevVersion = t.Version
	}
	if err := s.Store.SaveSteps(ctx, change); err != nil {
		if errors.Is(err, ErrConflict) {
			return step.Step{}, task.Refusef("step %s was decided or changed at the same moment; look again", stepID)
		}
		return step.Step{}, fmt.Errorf("store decision on step %s: %w", stepID, err)
	}
	s.publish(ctx, event.ForStep(event.StepDecided, decided, "owner:"+owner, now))
	return decided, nil
}

// editRefusal says why an owner's edit of a call was not accepted.
func editRefusal(err error) *task.Refusal {
	var limit *step.InputLimitError
	if errors.As(err, &limit) {
		return task.Refusef("the edited %v; nothing was decided", limit)
	}
	return task.Refusef("the edited input must be a JSON object, as the call's input is (%v); nothing was decided", err)
}

// AlreadyDecided explains why a step can no longer be decided: who decided
// it and when, or that it expired or was withdrawn.
func AlreadyDecided(st step.Step) *task.Refusal {
	switch st.Status {
	case step.Expired:
		return task.Refusef("step %s expired at %s; nothing was decided", st.ID, st.ExpiresAt.Format(time.RFC3339))
	case step.Withdrawn:
		return task.Refusef("step %s was withdrawn: the run asked for another step instead", st.ID)
	}
	at := ""
	if st.DecidedAt != nil {
		at = " at " + st.DecidedAt.Format(time.RFC3339)
	}
	verb := string(st.Status)
	if st.Status == step.Consumed {
		verb = "approved (and used)"
	}
	return task.Refusef("step %s was already %s by %s%s", st.ID, verb, st.DecidedBy, at)
}
