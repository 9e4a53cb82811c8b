package task_test

import (
	"testing"

	"github.com/useprickle/prickle/shared/domain/task"
)

// ownerWaiting is a task whose run asked its owner a step.
func ownerWaiting() task.Task {
	t := inState(task.Waiting)
	t.WaitingOn = ptr(task.WaitingOnOwnerApproval)
	return t
}

func TestWaitingOnOwner(t *testing.T) {
	tests := []struct {
		name string
		task task.Task
		want bool
	}{
		{"waiting on the owner", ownerWaiting(), true},
		{"waiting on a human", inState(task.Waiting), false},
		{"waiting on an agent", func() task.Task { t := inState(task.Waiting); t.WaitingOn = ptr(task.WaitingOnAgent); return t }(), false},
		{"waiting on nothing said", func() task.Task { t := inState(task.Waiting); t.WaitingOn = nil; return t }(), false},
		{"in approval (a result, not a step)", inState(task.Approval), false},
		{"working", inState(task.Working), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.task.WaitingOnOwner(); got != tt.want {
				t.Errorf("WaitingOnOwner() = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestAskOwnerNote: the history line of an asked step names the call and the step.
func TestAskOwnerNote(t *testing.T) {
	m, err := task.AskOwner(inState(task.Working), assignee, "git_push", "stp_9", now)
	if err != nil {
		t.Fatal(err)
	}
	if got := deref(m.Event.Note); got != "asked owner: git_push stp_9" {
		t.Errorf("note = %q", got)
	}
}

// TestStepDecided: the owner's decision on a step puts a task waiting on
// the owner back to working, by the owner; any other open task stays
// where it is; a closed task refuses.
func TestStepDecided(t *testing.T) {
	tests := []struct {
		name    string
		task    task.Task
		moves   bool
		refusal string
	}{
		{name: "waiting on the owner", task: ownerWaiting(), moves: true},
		{name: "waiting on a human", task: inState(task.Waiting)},
		{name: "working", task: inState(task.Working)},
		{name: "accepted", task: inState(task.Accepted)},
		{name: "in approval", task: inState(task.Approval)},
	}
	for _, s := range task.States {
		if !s.Open() {
			tests = append(tests, struct {
				name    string
				task    task.Task
				moves   bool
				refusal string
			}{name: string(s), task: inState(s), refusal: "task tsk_1 is " + string(s) + "; its steps no longer need a decision"})
		}
	}
	for _, tt := range tests {
		for _, decision := range []string{"approved", "refused"} {
			t.Run(tt.name+"/"+decision, func(t *testing.T) {
				before := tt.task
				m, err := task.StepDecided(before, "bob", decision, "stp_1", now)
				if tt.refusal != "" {
					assertRefusal(t, err, tt.refusal)
					return
				}
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if !tt.moves {
					if m != nil {
						t.Fatalf("moved to %s; want no move", m.Task.State)
					}
					return
				}
				if m == nil {
					t.Fatal("no move; want back to working")
				}
				e := m.Event
				if m.Task.State != task.Working || m.Task.WaitingOn != nil || !m.Task.UpdatedAt.Equal(now) || m.Task.Version != before.Version {
					t.Errorf("task = %s waiting on %s, updated %v, version %d", m.Task.State, deref(m.Task.WaitingOn), m.Task.UpdatedAt, m.Task.Version)
				}
				if e.By != "owner:bob" || e.Action != "step_decided" || e.From == nil || *e.From != task.Waiting || e.To != task.Working || deref(e.Note) != "owner bob "+decision+" stp_1" {
					t.Errorf("event = %+v (note %q)", e, deref(e.Note))
				}
				if !before.WaitingOnOwner() {
					t.Error("the rule changed its input task")
				}
			})
		}
	}
}

// TestStepExpired: a step's expiry puts a task waiting on its owner back to
// working, by Prickle, unless another step still waits; nothing else moves.
func TestStepExpired(t *testing.T) {
	tests := []struct {
		name          string
		task          task.Task
		othersPending bool
		moves         bool
	}{
		{"waiting on the owner", ownerWaiting(), false, true},
		{"another step still waits", ownerWaiting(), true, false},
		{"waiting on a human", inState(task.Waiting), false, false},
		{"working", inState(task.Working), false, false},
		{"in approval", inState(task.Approval), false, false},
		{"completed", inState(task.Completed), false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := task.StepExpired(tt.task, "stp_1", tt.othersPending, now)
			if !tt.moves {
				if m != nil {
					t.Fatalf("moved to %s; want no move", m.Task.State)
				}
				return
			}
			if m == nil {
				t.Fatal("no move; want back to working")
			}
			e := m.Event
			if m.Task.State != task.Working || m.Task.WaitingOn != nil || !m.Task.UpdatedAt.Equal(now) {
				t.Errorf("task = %s waiting on %s, updated %v", m.Task.State, deref(m.Task.WaitingOn), m.Task.UpdatedAt)
			}
			if e.By != task.System || e.Action != "step_expired" || e.From == nil || *e.From != task.Waiting || e.To != task.Working || deref(e.Note) != "step stp_1 expired without a decision" {
				t.Errorf("event = %+v (note %q)", e, deref(e.Note))
			}
		})
	}
}
