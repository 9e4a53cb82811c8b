package event

import (
	"slices"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/domain/task"
)

// TestForMove: each move someone reacts to stands for its events, named by
// the task version, with the line's actor and time; the others for none.
func TestForMove(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	tk := task.Task{ID: "tsk_1", Project: "website-v2", Version: 4}
	cases := []struct {
		action string
		to     task.State
		want   []Type
	}{
		{task.ActionHandOff, task.Routed, []Type{TaskRouted}},
		{task.ActionHandOff, task.Requested, nil},
		{task.ActionRoute, task.Routed, []Type{TaskRouted}},
		{task.ActionReturnResult, task.Verifying, []Type{ResultReturned}},
		{task.ActionReviewAccept, task.Approval, []Type{ApprovalRequested}},
		{task.ActionReviewAccept, task.Completed, []Type{TaskCompleted}},
		{task.ActionOwnerApprove, task.Completed, []Type{ResultDecided, TaskCompleted}},
		{task.ActionOwnerRefuse, task.Working, []Type{ResultDecided}},
		{"accept", task.Accepted, nil},
		{"checkpoint", task.Working, nil},
		{"decline", task.Rejected, nil},
		{"review_rework", task.Working, nil},
		{"review_reject", task.Rejected, nil},
		{"cancel", task.Cancelled, nil},
		{"step_requested", task.Working, nil},
	}
	for _, c := range cases {
		t.Run(c.action+"→"+string(c.to), func(t *testing.T) {
			tk.State = c.to
			evs := ForMove(tk, task.Event{At: at, By: "ana/claude", Action: c.action, To: c.to})
			var got []Type
			for _, e := range evs {
				got = append(got, e.Type)
				if want := string(e.Type) + ":tsk_1:4"; e.ID != want {
					t.Errorf("id = %q, want %q", e.ID, want)
				}
				if e.Actor != "ana/claude" || !e.At.Equal(at) || e.Task == nil || e.Task.State != c.to {
					t.Errorf("event %+v does not carry the line's actor and time and the task", e)
				}
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("events = %v, want %v", got, c.want)
			}
		})
	}
}
