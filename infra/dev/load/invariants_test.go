package main

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
			line("teleport", asg, st(task.Routed), task.Accepted)}, "not a move the load checks know"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := replay(tt.final, tt.history)
			if tt.wantErr == "" && err != nil {
				t.Fatalf("replay: %v", err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("replay: %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestLostOrPhantom(t *testing.T) {
	history := []task.Event{
		line("hand_off", "p/req", nil, task.Routed),
		line("accept", "p/asg", st(task.Routed), task.Accepted),
	}
	handOff, accept := move{"hand_off", "p/req", task.Routed}, move{"accept", "p/asg", task.Accepted}
	tests := []struct {
		name    string
		seen    []move
		unknown int
		wantErr string
	}{
		{"every move seen", []move{handOff, accept}, 0, ""},
		{"a move whose answer was lost", []move{handOff}, 1, ""},
		{"a move nobody saw", []move{handOff}, 0, "nobody saw succeed"},
		{"a lost update", []move{handOff, accept, {"checkpoint", "p/asg", task.Working}}, 0, "lost update: checkpoint"},
		{"one move seen twice", []move{handOff, accept, accept}, 0, "lost update: accept"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := lostOrPhantom(history, tt.seen, tt.unknown)
			if tt.wantErr == "" && err != nil {
				t.Fatalf("%v", err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("%v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		want   string
	}{
		{"ok", 200, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{}"}],"structuredContent":{"task":{"id":"tsk_1"}}}}`, kindOK},
		{"race lost", 200, `{"jsonrpc":"2.0","id":1,"result":{"isError":true,"content":[{"type":"text","text":"task tsk_1 was changed by another call at the same moment and is now accepted; read it again before retrying"}]}}`, kindStale},
		{"moved since read", 200, `{"jsonrpc":"2.0","id":1,"result":{"isError":true,"content":[{"type":"text","text":"task tsk_1 is cancelled; accept_task needs routed"}]}}`, kindStale},
		{"temporary", 200, `{"jsonrpc":"2.0","id":1,"result":{"isError":true,"content":[{"type":"text","text":"accept_task could not finish: Prickle's database is throttling requests right now. This is temporary and nothing was changed: retry the same call in a few seconds."}]}}`, kindTemporary},
		{"another refusal", 200, `{"jsonrpc":"2.0","id":1,"result":{"isError":true,"content":[{"type":"text","text":"evidence is required: at least one item"}]}}`, kindRefused},
		{"json-rpc error", 200, `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"boom"}}`, kindRPCError},
		{"503", 503, `{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"temporarily unavailable"}}`, "http_503"},
		{"401", 401, `{}`, kindHTTP4xx},
		{"not json", 200, `<html>`, kindBadResponse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := classify(tt.status, []byte(tt.body), 0).kind; got != tt.want {
				t.Errorf("kind %s, want %s", got, tt.want)
			}
		})
	}
}

func TestPercentile(t *testing.T) {
	d := []time.Duration{5, 1, 4, 2, 3, 10, 9, 8, 7, 6}
	for _, c := range []struct {
		p    int
		want time.Duration
	}{{50, 5}, {99, 10}, {10, 1}, {100, 10}} {
		if got := percentile(d, c.p); got != c.want {
			t.Errorf("p%d = %d, want %d", c.p, got, c.want)
		}
	}
	if percentile(nil, 50) != 0 {
		t.Error("percentile of nothing is not 0")
	}
}
