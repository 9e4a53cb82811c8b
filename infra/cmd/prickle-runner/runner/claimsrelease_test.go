package runner

import (
	"context"
	"github.com/useprickle/prickle/shared/domain/wakeup"
	"slices"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/domain/pulse"
)

// roomTasks is Prickle for a runner whose runs claim files: the tasks and
// Team Pulse, where an ended run's token no longer works.
type roomTasks struct {
	*fakeTasks
	*fakeRoom
}

func (r roomTasks) UpdatePulse(ctx context.Context, token string, u PulseUpdate) error {
	r.fakeTasks.mu.Lock()
	ended := slices.Contains(r.fakeTasks.ended, token)
	r.fakeTasks.mu.Unlock()
	if ended {
		return errUnauthorized
	}
	return r.fakeRoom.UpdatePulse(ctx, token, u)
}

// The runner releases a task's claimed files at the end of a run that ended
// by itself once the task is no longer its assignee's work: its agent's
// live pulse stops listing them; other runs' and the agent's own files stay.
func TestRunnerReleasesClaims(t *testing.T) {
	tests := []struct {
		name      string
		state     string
		reason    string
		paused    bool
		own       *pulse.Entry
		released  bool     // the claims file is emptied
		files     []string // the pulse update's files; nil for no update
		doing     string
		untouched bool // the pulse keeps its task
	}{
		{name: "the task returned: released, the pulse says the run ended", state: "verifying",
			own:      &pulse.Entry{Availability: "working", Doing: "Editing src/app.ts", TaskID: str("t1"), Files: []string{"src/app.ts", "docs/mine.md", "src/b.ts"}},
			released: true, files: []string{"docs/mine.md"}, doing: "Ended its run of task t1 (the task is verifying)."},
		{name: "the task closed while the pulse names another task: only the files go", state: "cancelled",
			own:      &pulse.Entry{Availability: "working", Doing: "On t2", TaskID: str("t2"), Files: []string{"src/app.ts", "src/t2.ts"}},
			released: true, files: []string{"src/t2.ts"}, doing: "On t2", untouched: true},
		{name: "a requester's review run: released", state: "working", reason: wakeup.ReasonResultReturned,
			own:      &pulse.Entry{TaskID: str("t1"), Files: []string{"src/app.ts"}},
			released: true, files: []string{}, doing: "Ended its run of task t1 (the task is working)."},
		{name: "the pulse is stale: nothing to narrow, the claims go", state: "completed",
			own:      &pulse.Entry{TaskID: str("t1"), Files: []string{"src/app.ts"}, UpdatedAt: time.Now().Add(-time.Hour)},
			released: true},
		{name: "the task goes on: kept", state: "working", own: &pulse.Entry{TaskID: str("t1"), Files: []string{"src/app.ts"}}},
		{name: "waiting on the owner: kept", state: "waiting", own: &pulse.Entry{TaskID: str("t1"), Files: []string{"src/app.ts"}}},
		{name: "paused on a call: kept", state: "verifying", paused: true, own: &pulse.Entry{TaskID: str("t1"), Files: []string{"src/app.ts"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, tasks, _, _ := testRunner(t, `true`, 1, time.Minute)
			room := &fakeRoom{settings: ClaimSettings{Agent: "alice/writer", FileGuard: "deny", PulseStaleSeconds: 1800}}
			r.Tasks = roomTasks{tasks, room}
			tasks.state = tt.state
			if tt.own != nil {
				e := *tt.own
				e.AgentID = "alice/writer"
				if e.UpdatedAt.IsZero() {
					e.UpdatedAt = time.Now().Add(-time.Minute)
				}
				room.entries = []pulse.Entry{e, {AgentID: "bob/coder", Files: []string{"src/app.ts"}, UpdatedAt: time.Now()}}
			}
			w := payload("t1", "run_x")
			if tt.reason != "" {
				w.Reason = tt.reason
			}
			dir := SessionDir(r.Config.StateDir, "alice/writer", "t1")
			claimed := Claims{Agent: "alice/writer", Project: "website-v2", TaskID: "t1", Files: []string{"src/app.ts", "src/b.ts"}}
			if err := SaveClaims(dir, claimed); err != nil {
				t.Fatal(err)
			}
			var paused *Call
			if tt.paused {
				paused = &Call{ToolUseID: "toolu_1", Name: "Bash"}
			}
			r.releaseClaims(w, dir, paused)
			c, err := LoadClaims(dir)
			if err != nil {
				t.Fatal(err)
			}
			if tt.released != (len(c.Files) == 0) {
				t.Errorf("claims after the run: %q; released: %v", c.Files, tt.released)
			}
			if tt.files == nil {
				if len(room.updates) != 0 {
					t.Errorf("pulse updated: %+v", room.updates)
				}
				return
			}
			if len(room.updates) != 1 {
				t.Fatalf("updates %+v, want one", room.updates)
			}
			u := room.updates[0]
			if !slices.Equal(u.Files, tt.files) || u.Doing != tt.doing {
				t.Errorf("update %+v, want files %q doing %q", u, tt.files, tt.doing)
			}
			if tt.untouched != (u.TaskID != nil && u.Availability == tt.own.Availability) {
				t.Errorf("update names task %v with %q; the pulse's own task kept: %v", u.TaskID, u.Availability, tt.untouched)
			}
			if !tt.untouched && (u.TaskID != nil || u.Availability != "idle") {
				t.Errorf("the pulse still names the task: %+v", u)
			}
			for _, tok := range room.tokens {
				if tok != w.RunToken {
					t.Errorf("released with %q, not the run's token", tok)
				}
			}
		})
	}
}

// The release is part of a run's end: before the run's token ends, in the
// runner's record of the run.
func TestRunnerReleasesClaimsAtTheEndOfARun(t *testing.T) {
	r, tasks, _, _ := testRunner(t, `true`, 1, time.Minute)
	room := &fakeRoom{settings: ClaimSettings{Agent: "alice/writer", FileGuard: "deny", PulseStaleSeconds: 1800},
		entries: []pulse.Entry{{AgentID: "alice/writer", TaskID: str("t1"), Files: []string{"src/app.ts"}, UpdatedAt: time.Now()}}}
	r.Tasks = roomTasks{tasks, room}
	tasks.state = "verifying"
	dir := SessionDir(r.Config.StateDir, "alice/writer", "t1")
	if err := SaveClaims(dir, Claims{Agent: "alice/writer", Project: "website-v2", TaskID: "t1", Files: []string{"src/app.ts"}}); err != nil {
		t.Fatal(err)
	}
	r.Offer("run_x", payload("t1", "run_x"), "pull", nil)
	r.Wait()
	if len(room.updates) != 1 || len(room.updates[0].Files) != 0 {
		t.Fatalf("updates %+v, want the file released", room.updates)
	}
	if !slices.Equal(tasks.ended, []string{"prk_r_run_x"}) {
		t.Errorf("ended %q, want the run's token ended after the release", tasks.ended)
	}
}
