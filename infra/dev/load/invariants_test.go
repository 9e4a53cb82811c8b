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
