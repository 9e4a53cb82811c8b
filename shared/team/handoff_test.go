package team_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/team"
)

// complete brings a routed code task from alice to bob to completed.
func (f *fixture) complete(id string) {
	f.t.Helper()
	f.must(f.svc.AcceptTask(ctx, bob, team.AcceptInput{TaskID: id}))
	f.must(f.svc.ReturnResult(ctx, bob, codeResult(id)))
	f.must(f.svc.ReviewResult(ctx, alice, team.ReviewInput{TaskID: id, Verdict: "accept"}))
}

func TestDependsOnKeepsATaskRequestedUntilTheLastDependencyCompletes(t *testing.T) {
	f := newFixture(t)
	a := f.handOff(alice, "website-v2", bob.Agent, "code")
	b := f.handOff(alice, "website-v2", bob.Agent, "code")
	c := f.handOff(alice, "website-v2", dave.Agent, "answer", a.ID, b.ID)
	if c.State != task.Requested {
		t.Fatalf("task with open dependencies is %s, want requested", c.State)
	}
	f.complete(a.ID)
	if got := f.task(c.ID).State; got != task.Requested {
		t.Fatalf("after one of two dependencies completed the task is %s, want requested", got)
	}
	f.complete(b.ID)
	got := f.task(c.ID)
	if got.State != task.Routed {
		t.Fatalf("after both dependencies completed the task is %s, want routed", got.State)
	}
	h, _ := f.store.History(ctx, c.ID)
	last := h[len(h)-1]
	if last.Action != "route" || last.By != task.System || *last.From != task.Requested || last.To != task.Routed {
		t.Errorf("routing line = %+v, want route by prickle requested→routed", last)
	}
	f.must(f.svc.AcceptTask(ctx, dave, team.AcceptInput{TaskID: c.ID}))
}

func TestDependsOnACompletedTaskRoutesAtOnce(t *testing.T) {
	f := newFixture(t)
	a := f.handOff(alice, "website-v2", bob.Agent, "code")
	f.complete(a.ID)
	if b := f.handOff(alice, "website-v2", dave.Agent, "answer", a.ID); b.State != task.Routed {
		t.Errorf("task depending on a completed task is %s, want routed", b.State)
	}
}

func TestDependsOnRefusesTasksOutsideTheProject(t *testing.T) {
	f := newFixture(t)
	mobile := f.handOff(bob, "mobile", carol.Agent, "code")
	cases := []struct {
		name string
		dep  string
	}{
		{"a task of another project", mobile.ID},
		{"a task that does not exist", "tsk_404"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := f.svc.HandOffTask(ctx, bob, team.HandOffInput{Project: "website-v2", Assignee: alice.Agent, Packet: task.Packet{
				Task: "x", DeliverableType: "answer", AcceptanceCriteria: []string{"y"}, DependsOn: []string{c.dep},
			}})
			wantRefusal(t, err, fmt.Sprintf("depends_on names %s, which is not a task of project website-v2", c.dep))
		})
	}
	page, _ := f.store.ListTasks(ctx, team.TaskQuery{Project: "website-v2", Limit: 100})
	if len(page.Tasks) != 0 {
		t.Errorf("refused hand-offs stored %d tasks", len(page.Tasks))
	}
}

func TestRouteDependents(t *testing.T) {
	f := newFixture(t)
	done := task.Task{ID: "tsk_done", Project: "website-v2", State: task.Completed, Requester: alice.Agent, Assignee: bob.Agent, CreatedAt: t0}
	open := task.Task{ID: "tsk_open", Project: "website-v2", State: task.Working, Requester: alice.Agent, Assignee: bob.Agent, CreatedAt: t0}
	f.store.AddTask(done)
	f.store.AddTask(open)
	// More requested dependents than one page of RouteDependents (100).
	var waiting []string
	for i := range 105 {
		id := fmt.Sprintf("tsk_w%03d", i)
		f.store.AddTask(task.Task{ID: id, Project: "website-v2", State: task.Requested, Requester: alice.Agent, Assignee: dave.Agent,
			Packet: task.Packet{DependsOn: []string{"tsk_done"}}, CreatedAt: t0})
		waiting = append(waiting, id)
	}
	f.store.AddTask(task.Task{ID: "tsk_both", Project: "website-v2", State: task.Requested, Requester: alice.Agent, Assignee: dave.Agent,
		Packet: task.Packet{DependsOn: []string{"tsk_done", "tsk_open"}}, CreatedAt: t0})
	f.store.AddTask(task.Task{ID: "tsk_other", Project: "website-v2", State: task.Requested, Requester: alice.Agent, Assignee: dave.Agent,
		Packet: task.Packet{DependsOn: []string{"tsk_open"}}, CreatedAt: t0})

	if err := f.svc.RouteDependents(ctx, "website-v2", "tsk_done"); err != nil {
		t.Fatal(err)
	}
	for _, id := range waiting {
		if got := f.task(id).State; got != task.Routed {
			t.Fatalf("%s is %s, want routed", id, got)
		}
	}
	for _, id := range []string{"tsk_both", "tsk_other"} {
		if got := f.task(id).State; got != task.Requested {
			t.Errorf("%s is %s, want requested (tsk_open is not completed)", id, got)
		}
	}
	if err := f.svc.RouteDependents(ctx, "website-v2", "tsk_done"); err != nil {
		t.Errorf("routing again: %v (it must be safe to repeat)", err)
	}
}

func TestMembership(t *testing.T) {
	f := newFixture(t)
	tk := f.handOff(alice, "website-v2", bob.Agent, "code")
	cases := []struct {
		name string
		call func() error
		want string
	}{
		{"outsider reads a task", func() error {
			_, err := f.svc.GetTask(ctx, carol, team.GetTaskInput{TaskID: tk.ID})
			return err
		}, "no task tsk_1 in a project of carol/outsider"},
		{"outsider reads a missing task: the same answer", func() error {
			_, err := f.svc.GetTask(ctx, carol, team.GetTaskInput{TaskID: "tsk_404"})
			return err
		}, "no task tsk_404 in a project of carol/outsider"},
		{"outsider accepts", func() error {
			_, err := f.svc.AcceptTask(ctx, carol, team.AcceptInput{TaskID: tk.ID})
			return err
		}, "no task tsk_1 in a project of carol/outsider"},
		{"outsider cancels", func() error {
			_, err := f.svc.CancelTask(ctx, carol, team.CancelInput{TaskID: tk.ID, Reason: "x"})
			return err
		}, "no task tsk_1 in a project of carol/outsider"},
		{"outsider reads the room", func() error {
			_, err := f.svc.ReadRoom(ctx, carol, team.ReadRoomInput{Project: "website-v2"})
			return err
		}, "no project website-v2 that carol/outsider belongs to"},
		{"anyone reads a missing room: the same answer", func() error {
			_, err := f.svc.ReadRoom(ctx, carol, team.ReadRoomInput{Project: "nowhere"})
			return err
		}, "no project nowhere that carol/outsider belongs to"},
		{"outsider hands off", func() error {
			_, err := f.svc.HandOffTask(ctx, carol, team.HandOffInput{Project: "website-v2", Assignee: bob.Agent, Packet: task.Packet{Task: "x", DeliverableType: "answer", AcceptanceCriteria: []string{"y"}}})
			return err
		}, "no project website-v2 that carol/outsider belongs to"},
		{"outsider updates the pulse", func() error {
			_, err := f.svc.UpdatePulse(ctx, carol, team.UpdatePulseInput{Project: "website-v2", Doing: "snooping"})
			return err
		}, "no project website-v2 that carol/outsider belongs to"},
		{"member names an outsider's task in the pulse", func() error {
			mob := f.handOff(bob, "mobile", carol.Agent, "code")
			_, err := f.svc.UpdatePulse(ctx, alice, team.UpdatePulseInput{Project: "website-v2", Doing: "x", TaskID: mob.ID})
			return err
		}, "no task tsk_2 in a project of alice/writer"},
		{"hand-off to an agent outside the project", func() error {
			_, err := f.svc.HandOffTask(ctx, alice, team.HandOffInput{Project: "website-v2", Assignee: carol.Agent, Packet: task.Packet{Task: "x", DeliverableType: "answer", AcceptanceCriteria: []string{"y"}}})
			return err
		}, "assignee carol/outsider is not an agent of project website-v2"},
		{"hand-off to an agent that does not exist", func() error {
			_, err := f.svc.HandOffTask(ctx, alice, team.HandOffInput{Project: "website-v2", Assignee: "nobody/here", Packet: task.Packet{Task: "x", DeliverableType: "answer", AcceptanceCriteria: []string{"y"}}})
			return err
		}, "assignee nobody/here is not an agent of project website-v2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.call()
			var r *task.Refusal
			wantRefusal(t, err, c.want)
			if errors.As(err, &r) && r.Msg != c.want {
				t.Errorf("refusal = %q, want exactly %q (nothing more to learn)", r.Msg, c.want)
			}
		})
	}
}

func TestRunTokenWritesOnlyItsOwnTask(t *testing.T) {
	f := newFixture(t)
	mine := f.handOff(alice, "website-v2", bob.Agent, "code")
	other := f.handOff(alice, "website-v2", bob.Agent, "code")
	r := run(bob, mine.ID, "run_1", "")
	cases := []struct {
		name string
		call func() (team.TaskOutput, error)
	}{
		{"accept", func() (team.TaskOutput, error) { return f.svc.AcceptTask(ctx, r, team.AcceptInput{TaskID: other.ID}) }},
		{"decline", func() (team.TaskOutput, error) {
			return f.svc.DeclineTask(ctx, r, team.DeclineInput{TaskID: other.ID, Reason: "x"})
		}},
		{"checkpoint", func() (team.TaskOutput, error) {
			return f.svc.SaveCheckpoint(ctx, r, team.CheckpointInput{TaskID: other.ID, Progress: "x"})
		}},
		{"return_result", func() (team.TaskOutput, error) { return f.svc.ReturnResult(ctx, r, codeResult(other.ID)) }},
	}
	for _, c := range cases {
		t.Run("refused: "+c.name+" on another task", func(t *testing.T) {
			_, err := c.call()
			wantRefusal(t, err, "this run token is for task tsk_1; use your agent token for task tsk_2")
			if got := f.task(other.ID); got.State != task.Routed || got.Version != 1 {
				t.Errorf("other task is %s at version %d, want untouched", got.State, got.Version)
			}
		})
	}
	t.Run("allowed: its own task", func(t *testing.T) {
		if got := f.must(f.svc.AcceptTask(ctx, r, team.AcceptInput{TaskID: mine.ID})); got.State != task.Accepted {
			t.Errorf("own task is %s, want accepted", got.State)
		}
	})
}

// TestHandOffToYourselfRefused: the self rule at the door; nothing is stored.
func TestHandOffToYourselfRefused(t *testing.T) {
	f := newFixture(t)
	_, err := f.svc.HandOffTask(ctx, bob, team.HandOffInput{Project: "website-v2", Assignee: bob.Agent, Packet: task.Packet{
		Task: "x", DeliverableType: "answer", AcceptanceCriteria: []string{"y"},
	}})
	wantRefusal(t, err, "bob/reviewer may not hand a task to itself: the requester reviews the assignee's result, and no agent accepts its own result; hand it to another agent of the project")
	page, _ := f.store.ListTasks(ctx, team.TaskQuery{Project: "website-v2", Limit: 100})
	if len(page.Tasks) != 0 {
		t.Errorf("a refused hand-off stored %d tasks", len(page.Tasks))
	}
}
