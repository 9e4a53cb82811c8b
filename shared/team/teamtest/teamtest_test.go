package teamtest_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/teamtest"
)

var (
	ctx = context.Background()
	t0  = time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
)

func seeded() *teamtest.Store {
	s := teamtest.New()
	s.AddTask(task.Task{ID: "tsk_1", Project: "p", State: task.Working, Requester: "a/x", Assignee: "b/y", CreatedAt: t0,
		Packet: task.Packet{Files: []string{"f.go"}}})
	return s
}

func pendingStep(id string) step.Step {
	return step.Step{ID: id, TaskID: "tsk_1", Status: step.Pending, Input: json.RawMessage(`{}`), CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}
}

func moveTo(s task.State) *task.Move {
	return &task.Move{Task: task.Task{ID: "tsk_1", Project: "p", State: s, CreatedAt: t0}, Event: task.Event{Action: "x", To: s}}
}

func TestNotFound(t *testing.T) {
	s := seeded()
	checks := map[string]error{}
	_, checks["agent"] = s.Agent(ctx, "no/one")
	_, checks["project"] = s.Project(ctx, "nope")
	_, checks["task"] = s.Task(ctx, "tsk_404")
	_, checks["history"] = s.History(ctx, "tsk_404")
	_, checks["step"] = s.Step(ctx, "tsk_1", "stp_404")
	for name, err := range checks {
		if !errors.Is(err, team.ErrNotFound) {
			t.Errorf("%s: err = %v, want team.ErrNotFound", name, err)
		}
	}
}

func TestApplyMoveIsConditionalOnVersion(t *testing.T) {
	s := seeded()
	if err := s.ApplyMove(ctx, 1, task.Move{Task: task.Task{ID: "tsk_404"}}); !errors.Is(err, team.ErrConflict) {
		t.Errorf("missing task: err = %v, want team.ErrConflict (the version condition fails)", err)
	}
	if err := s.ApplyMove(ctx, 2, *moveTo(task.Waiting)); !errors.Is(err, team.ErrConflict) {
		t.Fatalf("stale version: err = %v, want team.ErrConflict", err)
	}
	if got, _ := s.Task(ctx, "tsk_1"); got.State != task.Working || got.Version != 1 {
		t.Fatalf("a lost race wrote: %s at version %d", got.State, got.Version)
	}
	if err := s.ApplyMove(ctx, 1, *moveTo(task.Waiting)); err != nil {
		t.Fatal(err)
	}
	got, _ := s.Task(ctx, "tsk_1")
	h, _ := s.History(ctx, "tsk_1")
	if got.State != task.Waiting || got.Version != 2 || len(h) != 2 || h[1].Seq != 2 {
		t.Errorf("after the move: %s v%d with %d history lines, want waiting v2 with 2", got.State, got.Version, len(h))
	}
	if err := s.ApplyMove(ctx, 1, *moveTo(task.Working)); !errors.Is(err, team.ErrConflict) {
		t.Errorf("replayed move: err = %v, want team.ErrConflict", err)
	}
}

func TestCreateTaskRefusesAnExistingID(t *testing.T) {
	s := seeded()
	err := s.CreateTask(ctx, task.Task{ID: "tsk_1", State: task.Routed}, task.Event{})
	if !errors.Is(err, team.ErrConflict) {
		t.Errorf("err = %v, want team.ErrConflict", err)
	}
	if got, _ := s.Task(ctx, "tsk_1"); got.State != task.Working {
		t.Errorf("the existing task was overwritten: %s", got.State)
	}
}

func TestSaveStepsIsAllOrNothing(t *testing.T) {
	withdrawn := pendingStep("stp_1")
	withdrawn.Status = step.Withdrawn
	cases := []struct {
		name   string
		change team.StepChange
		err    error // nil: the change lands
	}{
		{"new step and move", team.StepChange{Steps: []team.StepWrite{{Step: withdrawn, Prev: step.Pending}, {Step: pendingStep("stp_2")}}, Move: moveTo(task.Waiting), PrevVersion: 1}, nil},
		{"a new step that exists", team.StepChange{Steps: []team.StepWrite{{Step: pendingStep("stp_2")}, {Step: pendingStep("stp_1")}}}, team.ErrConflict},
		{"a step not in its expected status", team.StepChange{Steps: []team.StepWrite{{Step: pendingStep("stp_2")}, {Step: withdrawn, Prev: step.Approved}}}, team.ErrConflict},
		{"an expected step that does not exist", team.StepChange{Steps: []team.StepWrite{{Step: pendingStep("stp_2")}, {Step: pendingStep("stp_9"), Prev: step.Pending}}}, team.ErrConflict},
		{"a stale task version", team.StepChange{Steps: []team.StepWrite{{Step: pendingStep("stp_2")}}, Move: moveTo(task.Waiting), PrevVersion: 7}, team.ErrConflict},
		{"one step written twice", team.StepChange{Steps: []team.StepWrite{{Step: withdrawn, Prev: step.Pending}, {Step: withdrawn, Prev: step.Pending}}}, errors.New("any")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := seeded()
			if err := s.SaveSteps(ctx, team.StepChange{Steps: []team.StepWrite{{Step: pendingStep("stp_1")}}}); err != nil {
				t.Fatal(err)
			}
			err := s.SaveSteps(ctx, c.change)
			steps, _ := s.StepsForTask(ctx, "tsk_1")
			tk, _ := s.Task(ctx, "tsk_1")
			if c.err == nil {
				if err != nil {
					t.Fatalf("SaveSteps: %v", err)
				}
				if len(steps) != 2 || steps[0].Status != step.Withdrawn || steps[1].Status != step.Pending || tk.State != task.Waiting || tk.Version != 2 {
					t.Errorf("after the change: steps %v, task %s v%d", steps, tk.State, tk.Version)
				}
				return
			}
			if err == nil || (errors.Is(c.err, team.ErrConflict) && !errors.Is(err, team.ErrConflict)) {
				t.Fatalf("err = %v, want %v", err, c.err)
			}
			if len(steps) != 1 || steps[0].Status != step.Pending || tk.State != task.Working || tk.Version != 1 {
				t.Errorf("a failed change wrote: %d steps (first %s), task %s v%d", len(steps), steps[0].Status, tk.State, tk.Version)
			}
		})
	}
}

func TestReadsAreCopies(t *testing.T) {
	s := seeded()
	got, _ := s.Task(ctx, "tsk_1")
	got.Packet.Files[0] = "changed"
	got.State = task.Cancelled
	again, _ := s.Task(ctx, "tsk_1")
	if again.Packet.Files[0] != "f.go" || again.State != task.Working {
		t.Errorf("changing a read task changed the store: %+v", again)
	}
}

// TestListTasksContract holds the fake to the ListTasks contract the
// DynamoDB store keeps too (shared/aws/store's TestListTasksContract).
func TestListTasksContract(t *testing.T) {
	teamtest.RunContract(t, func(*testing.T) team.Store { return teamtest.New() })
}
