package invariants

import (
	"strings"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/domain/task"
)

func line(action, by string, from *task.State, to task.State) task.Event {
	return task.Event{At: time.Unix(0, 0), Action: action, By: by, From: from, To: to}
}

func st(s task.State) *task.State { return &s }

func TestReplay(t *testing.T) {
	const req, asg = "p/req", "p/asg"
	final := func(s task.State) task.Task {
		return task.Task{ID: "tsk_1", State: s, Requester: req, Assignee: asg, Packet: task.Packet{DeliverableType: "answer"}}
	}
	handOff := line("hand_off", req, nil, task.Routed)
	tests := []struct {
		name    string
		final   task.Task
		history []task.Event
		wantErr string
	}{
		{"accepted, worked, returned, reworked, returned, accepted", final(task.Completed), []task.Event{handOff,
			line("accept", asg, st(task.Routed), task.Accepted),
			line("checkpoint", asg, st(task.Accepted), task.Working),
			line("return_result", asg, st(task.Working), task.Verifying),
			line("review_rework", req, st(task.Verifying), task.Working),
			line("return_result", asg, st(task.Working), task.Verifying),
			line("review_accept", req, st(task.Verifying), task.Completed)}, ""},
		{"declined", final(task.Rejected), []task.Event{handOff, line("decline", asg, st(task.Routed), task.Rejected)}, ""},
		{"cancelled while verifying", final(task.Cancelled), []task.Event{handOff,
			line("accept", asg, st(task.Routed), task.Accepted),
			line("return_result", asg, st(task.Accepted), task.Verifying),
			line("cancel", req, st(task.Verifying), task.Cancelled)}, ""},
		{"asked its owner, decided, asked again, expired", final(task.Working), []task.Event{handOff,
			line("accept", asg, st(task.Routed), task.Accepted),
			line("step_requested", asg, st(task.Accepted), task.Waiting),
			line("step_decided", "owner:p", st(task.Waiting), task.Working),
			line("step_requested", asg, st(task.Working), task.Waiting),
			line("step_expired", "system", st(task.Waiting), task.Working)}, ""},
		{"a decision of a task not waiting on its owner", final(task.Working), []task.Event{handOff,
			line("accept", asg, st(task.Routed), task.Accepted),
			line("checkpoint", asg, st(task.Accepted), task.Working),
			line("step_decided", "owner:p", st(task.Working), task.Working)}, "the rules give no move here"},
		{"no history", final(task.Routed), nil, "no history"},
		{"does not start with a hand-off", final(task.Accepted), []task.Event{line("accept", asg, st(task.Routed), task.Accepted)}, "not a hand-off"},
		{"accepted twice", final(task.Accepted), []task.Event{handOff,
			line("accept", asg, st(task.Routed), task.Accepted),
			line("accept", asg, st(task.Routed), task.Accepted)}, "moves from routed but the task was accepted"},
		{"a move the rules refuse", final(task.Completed), []task.Event{handOff,
			line("review_accept", req, st(task.Routed), task.Completed)}, "review_result needs verifying"},
		{"a move by the wrong agent", final(task.Accepted), []task.Event{handOff,
			line("accept", req, st(task.Routed), task.Accepted)}, "is for its assignee"},
		{"a line going elsewhere than the rules", final(task.Working), []task.Event{handOff,
			line("accept", asg, st(task.Routed), task.Working)}, "the rules give accepted"},
		{"history ends elsewhere than the task", final(task.Completed), []task.Event{handOff,
			line("accept", asg, st(task.Routed), task.Accepted)}, "history ends in accepted, the task is completed"},
		{"an unknown action", final(task.Accepted), []task.Event{handOff,
			line("teleport", asg, st(task.Routed), task.Accepted)}, "not a move the checks know"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Replay(tt.final, tt.history)
			if tt.wantErr == "" && err != nil {
				t.Fatalf("replay: %v", err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("replay: %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}
