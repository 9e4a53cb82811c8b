package runner

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/domain/pulse"
)

func TestCodexPatchFiles(t *testing.T) {
	move := codexChange{Path: "src/old.ts"}
	move.Kind.Type, move.Kind.MovePath = "update", "src/new.ts"
	tests := []struct {
		name    string
		changes []codexChange
		want    []string
	}{
		{"none", nil, nil},
		{"each change's path", []codexChange{{Path: "/w/a.ts"}, {Path: "b.ts"}}, []string{"/w/a.ts", "b.ts"}},
		{"a move claims where it goes too", []codexChange{move}, []string{"src/old.ts", "src/new.ts"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := codexPatchFiles(tc.changes); !slices.Equal(got, tc.want) {
				t.Fatalf("files %v, want %v", got, tc.want)
			}
		})
	}
}

// stepsRoom is Prickle as a Codex run reaches it: its steps and its Team Pulse.
type stepsRoom struct {
	*fakeSteps
	*fakeRoom
}

func TestCodexPatchClaims(t *testing.T) {
	bob := pulse.Entry{AgentID: "bob/coder", Project: "website-v2", TaskID: str("tsk_theirs"), Files: []string{"src/held.ts"}, UpdatedAt: time.Now().Add(-time.Minute)}
	tests := []struct {
		name, guard, file string
		reply             string
		asks              int
		reason, refusal   string
		claimed           bool
	}{
		{name: "deny: a teammate's file is declined without asking; the model is told who holds it", guard: pulse.GuardDeny, file: "src/held.ts",
			reply: `{"decision":"decline"}`, refusal: "bob/coder holds src/held.ts for task tsk_theirs"},
		{name: "ask: the owner reads who holds it; allowed, the holder keeps it", guard: pulse.GuardAsk, file: "src/held.ts",
			reply: `{"decision":"accept"}`, asks: 1, reason: "bob/coder holds src/held.ts"},
		{name: "a free file: asked as always, claimed once allowed", guard: pulse.GuardDeny, file: "src/free.ts",
			reply: `{"decision":"accept"}`, asks: 1, claimed: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newClaimRig(t, tc.guard)
			r.room.entries = []pulse.Entry{bob}
			steps := &fakeSteps{script: []stepReply{consumed}}
			env := codexEnv{RunToken: r.env.RunToken, RunID: "run_1", TaskID: r.ce.TaskID, Project: r.ce.Project, SessionDir: r.session}
			h := newCodexHost(CodexOptions{Poll: time.Hour, PollMax: time.Hour}, env, r.root, stepsRoom{steps, r.room}, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
			h.items.Started(codexItem{Type: "fileChange", ID: "call_patch", Changes: []codexChange{{Path: r.root + "/" + tc.file, Diff: "+x"}}})
			c, s := newTestConn(t)
			done := make(chan struct{})
			go func() {
				h.approve(context.Background(), c, rpcMessage{ID: json.RawMessage(`3`), Method: codexFileApproval, Params: json.RawMessage(`{"itemId":"call_patch"}`)})
				close(done)
			}()
			m := s.next(t)
			<-done
			if jsonText(m["result"]) != tc.reply {
				t.Fatalf("reply %v, want %s", m, tc.reply)
			}
			if steps.count() != tc.asks {
				t.Fatalf("asked %d times, want %d", steps.count(), tc.asks)
			}
			if tc.reason != "" && !strings.Contains(steps.asked[0].Reason, tc.reason) {
				t.Fatalf("the owner read %q, want %q", steps.asked[0].Reason, tc.reason)
			}
			rs := h.takeRefusals()
			if (tc.refusal != "") != (len(rs) == 1) || (len(rs) == 1 && !strings.Contains(rs[0].Message, tc.refusal)) {
				t.Fatalf("refusals %+v, want %q", rs, tc.refusal)
			}
			own := r.room.own()
			if got := own != nil && slices.Contains(own.Files, tc.file); got != tc.claimed {
				t.Fatalf("claimed %v, want %v (pulse %+v)", got, tc.claimed, own)
			}
		})
	}
}

func TestCodexCommandChangesClaimed(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		claimed bool
	}{
		{"a file the command wrote is claimed", "src/gen.ts", true},
		{"a teammate's file it wrote is not: the holder keeps it", "src/held.ts", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newClaimRig(t, pulse.GuardDeny)
			r.room.entries = []pulse.Entry{{AgentID: "bob/coder", Project: "website-v2", Files: []string{"src/held.ts"}, UpdatedAt: time.Now()}}
			env := codexEnv{RunToken: r.env.RunToken, RunID: "run_1", TaskID: r.ce.TaskID, Project: r.ce.Project, SessionDir: r.session}
			h := newCodexHost(CodexOptions{Poll: time.Hour, PollMax: time.Hour}, env, r.root, stepsRoom{&fakeSteps{}, r.room}, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
			markTree(context.Background(), r.session, r.root)
			write(t, r.root, tc.file, "generated\n")
			h.claimCommandChanges(context.Background())
			own := r.room.own()
			if got := own != nil && slices.Contains(own.Files, tc.file); got != tc.claimed {
				t.Fatalf("claimed %v, want %v (pulse %+v)", got, tc.claimed, own)
			}
		})
	}
}
