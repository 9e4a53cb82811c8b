package team_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/teamtest"
)

var (
	ctx = context.Background()
	t0  = time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
)

// The cast: alice and bob work on website-v2; dave too; carol only on mobile.
var (
	alice = identity.Caller{Agent: "alice/writer", Owner: "alice", Kind: identity.KindAgent}
	bob   = identity.Caller{Agent: "bob/reviewer", Owner: "bob", Kind: identity.KindAgent}
	dave  = identity.Caller{Agent: "dave/designer", Owner: "dave", Kind: identity.KindAgent}
	carol = identity.Caller{Agent: "carol/outsider", Owner: "carol", Kind: identity.KindAgent}
)

// run is the caller of a woken run: a run token of agent c for a task.
func run(c identity.Caller, taskID, runID, resumes string) identity.Caller {
	c.Kind, c.TaskID, c.RunID, c.ResumesRun = identity.KindRun, taskID, runID, resumes
	return c
}

// fixture is a team service over the in-memory store, with a clock the
// test moves and ids that count up per prefix (tsk_1, tsk_2, stp_1, ...).
type fixture struct {
	t     *testing.T
	store *teamtest.Store
	svc   *team.Service
	now   time.Time
	ids   map[string]int
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{t: t, store: teamtest.New(), now: t0, ids: map[string]int{}}
	f.svc = &team.Service{
		Store: f.store,
		Now:   func() time.Time { return f.now },
		NewID: func(prefix string) string {
			f.ids[prefix]++
			return fmt.Sprintf("%s%d", prefix, f.ids[prefix])
		},
	}
	f.store.AddProject(team.Project{Slug: "website-v2", Name: "Website v2", OwnerApprovalTypes: []string{"design"}, StepDeadline: time.Hour})
	f.store.AddProject(team.Project{Slug: "mobile", Name: "Mobile"})
	f.store.AddAgent(team.Agent{ID: alice.Agent, Owner: "alice", Projects: []string{"website-v2"}})
	f.store.AddAgent(team.Agent{ID: bob.Agent, Owner: "bob", Projects: []string{"website-v2", "mobile"}})
	f.store.AddAgent(team.Agent{ID: dave.Agent, Owner: "dave", Projects: []string{"website-v2"}})
	f.store.AddAgent(team.Agent{ID: carol.Agent, Owner: "carol", Projects: []string{"mobile"}})
	return f
}

func (f *fixture) advance(d time.Duration) { f.now = f.now.Add(d) }

// handOff creates a task of a deliverable type or fails the test.
func (f *fixture) handOff(by identity.Caller, project, assignee, typ string, dependsOn ...string) task.Task {
	f.t.Helper()
	out, err := f.svc.HandOffTask(ctx, by, team.HandOffInput{Project: project, Assignee: assignee, Packet: task.Packet{
		Task: "Do the thing", DeliverableType: typ, AcceptanceCriteria: []string{"it is done"}, DependsOn: dependsOn,
	}})
	if err != nil {
		f.t.Fatalf("hand_off_task: %v", err)
	}
	return out.Task
}

// working hands a code task from alice to bob and brings it to working.
func (f *fixture) working() task.Task {
	f.t.Helper()
	tk := f.handOff(alice, "website-v2", bob.Agent, "code")
	f.must(f.svc.AcceptTask(ctx, bob, team.AcceptInput{TaskID: tk.ID}))
	return f.must(f.svc.SaveCheckpoint(ctx, bob, team.CheckpointInput{TaskID: tk.ID, Progress: "started"}))
}

// must unwraps a task-moving tool's answer or fails the test.
func (f *fixture) must(out team.TaskOutput, err error) task.Task {
	f.t.Helper()
	if err != nil {
		f.t.Fatalf("unexpected error: %v", err)
	}
	return out.Task
}

// task reads a task straight from the store.
func (f *fixture) task(id string) task.Task {
	f.t.Helper()
	tk, err := f.store.Task(ctx, id)
	if err != nil {
		f.t.Fatalf("read task %s: %v", id, err)
	}
	return tk
}

// codeResult is a result that fits a code task.
func codeResult(taskID string) team.ReturnResultInput {
	return team.ReturnResultInput{TaskID: taskID, Summary: "Done, tests pass.", Evidence: []task.Evidence{
		{Kind: "test_output", Summary: "go test ./...", Content: "ok"},
	}}
}

// wantRefusal fails unless err is a refusal whose message contains every part.
func wantRefusal(t *testing.T, err error, parts ...string) {
	t.Helper()
	var r *task.Refusal
	if !errors.As(err, &r) {
		t.Fatalf("err = %v, want a refusal mentioning %q", err, parts)
	}
	for _, p := range parts {
		if !strings.Contains(r.Msg, p) {
			t.Errorf("refusal %q does not mention %q", r.Msg, p)
		}
	}
}

func waitingOn(tk task.Task) string {
	if tk.WaitingOn == nil {
		return ""
	}
	return *tk.WaitingOn
}

func itoa(n int) string { return fmt.Sprint(n) }

func quote(s string) string { return fmt.Sprintf("%q", s) }
