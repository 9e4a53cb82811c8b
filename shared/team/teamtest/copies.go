package teamtest

import (
	"bytes"
	"slices"

	"github.com/useprickle/prickle/shared/domain/pulse"
	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/domain/task"
)

// The copies below keep callers from changing stored items through shared
// slices and pointers, as a real store's round trip would.

func copyTask(t task.Task) task.Task {
	t.WaitingOn = copyPtr(t.WaitingOn)
	t.Packet.AcceptanceCriteria = slices.Clone(t.Packet.AcceptanceCriteria)
	t.Packet.Files = slices.Clone(t.Packet.Files)
	t.Packet.DependsOn = slices.Clone(t.Packet.DependsOn)
	if t.Result != nil {
		r := *t.Result
		r.Evidence = slices.Clone(r.Evidence)
		t.Result = &r
	}
	if t.LatestCheckpoint != nil {
		cp := *t.LatestCheckpoint
		cp.Decisions = slices.Clone(cp.Decisions)
		cp.FilesTouched = slices.Clone(cp.FilesTouched)
		cp.NextSteps = slices.Clone(cp.NextSteps)
		cp.OpenQuestions = slices.Clone(cp.OpenQuestions)
		t.LatestCheckpoint = &cp
	}
	return t
}

func copyEvent(e task.Event) task.Event {
	e.From = copyPtr(e.From)
	e.Note = copyPtr(e.Note)
	return e
}

func copyStep(st step.Step) step.Step {
	st.Input = bytes.Clone(st.Input)
	st.Edited = bytes.Clone(st.Edited)
	st.DecidedAt = copyPtr(st.DecidedAt)
	st.Amount = copyPtr(st.Amount)
	return st
}

func copyPulse(e pulse.Entry) pulse.Entry {
	e.TaskID = copyPtr(e.TaskID)
	e.Branch = copyPtr(e.Branch)
	e.LastDecision = copyPtr(e.LastDecision)
	e.Files = slices.Clone(e.Files)
	return e
}

func copyPtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
