// Package invariants checks what the local stack's store holds after a run
// (the load command's, the fault run's): each task's history is a path
// through the state machine, and each allowed call, grant use, budget debit
// and wake-up happened once.
package invariants

import (
	"fmt"
	"strings"

	"github.com/useprickle/prickle/shared/domain/task"
)

// Replay checks that a task's history is a path through the state machine:
// it starts with a hand-off and every later line is a move shared/domain/task's
// rules allow from the state before it, by that line's actor, to that
// line's state. final is the task as stored (its assignee, type, result).
func Replay(final task.Task, history []task.Event) error {
	if len(history) == 0 {
		return fmt.Errorf("no history")
	}
	first := history[0]
	if first.Action != "hand_off" || first.From != nil || (first.To != task.Routed && first.To != task.Requested) {
		return fmt.Errorf("history starts with %s %v→%s, not a hand-off", first.Action, first.From, first.To)
	}
	t := final
	t.State, t.WaitingOn, t.Requester = first.To, nil, first.By
	for i, e := range history[1:] {
		if e.From == nil || *e.From != t.State {
			return fmt.Errorf("line %d (%s) moves from %v but the task was %s", i+2, e.Action, deref(e.From), t.State)
		}
		m, err := apply(t, e)
		if err != nil {
			return fmt.Errorf("line %d (%s by %s, %s→%s): %w", i+2, e.Action, e.By, t.State, e.To, err)
		}
		if m.Task.State != e.To {
			return fmt.Errorf("line %d (%s by %s) goes to %s; the rules give %s", i+2, e.Action, e.By, e.To, m.Task.State)
		}
		t = m.Task
	}
	if t.State != final.State {
		return fmt.Errorf("history ends in %s, the task is %s", t.State, final.State)
	}
	return nil
}

// apply runs the rule of one history line on the task before it.
func apply(t task.Task, e task.Event) (task.Move, error) {
	note := deref(e.Note)
	switch e.Action {
	case "accept":
		return task.Accept(t, e.By, note, e.At)
	case "decline":
		return task.Decline(t, e.By, note, e.At)
	case "checkpoint":
		waiting := ""
		if e.To == task.Waiting && (t.WaitingOn == nil || *t.WaitingOn != task.WaitingOnOwnerApproval) {
			waiting = task.WaitingOnAgent
		}
		return task.SaveCheckpoint(t, e.By, task.Checkpoint{Progress: note}, waiting, e.At)
	case "return_result":
		r := task.Result{Summary: note, Provenance: task.ProvenanceAgentGenerated, Evidence: []task.Evidence{{Kind: "note", Summary: "replayed"}}}
		if t.Result != nil {
			r = *t.Result
			if r.Provenance == task.ProvenanceOwnerApproved {
				r.Provenance = task.ProvenanceAgentGenerated // the owner's approval sets it later
			}
		}
		return task.ReturnResult(t, e.By, r, e.At)
	case "review_accept", "review_rework", "review_reject":
		if note == "" {
			note = "replayed"
		}
		return task.Review(t, e.By, strings.TrimPrefix(e.Action, "review_"), note, e.To == task.Approval, e.At)
	case "cancel":
		return task.Cancel(t, e.By, note, e.At)
	case "route":
		return task.Route(t, e.At)
	case task.ActionStepRequested:
		return task.AskOwner(t, e.By, "", "", e.At)
	case task.ActionStepDecided:
		return stepMove(task.StepDecided(t, strings.TrimPrefix(e.By, "owner:"), "decided", "", e.At))
	case task.ActionStepExpired:
		return stepMove(task.StepExpired(t, "", false, e.At), nil)
	case "owner_approve", "owner_refuse":
		return task.DecideApproval(t, strings.TrimPrefix(e.By, "owner:"), e.Action == "owner_approve", note, e.At)
	}
	return task.Move{}, fmt.Errorf("action %q is not a move the checks know", e.Action)
}

// stepMove is a step's move, which the rules may say is none.
func stepMove(m *task.Move, err error) (task.Move, error) {
	if err != nil {
		return task.Move{}, err
	}
	if m == nil {
		return task.Move{}, fmt.Errorf("the rules give no move here")
	}
	return *m, nil
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
