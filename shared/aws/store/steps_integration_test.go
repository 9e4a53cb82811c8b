//go:build integration

package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/teamtest"
)

func sampleStep(t *testing.T, taskID, id, input string, created time.Time) step.Step {
	t.Helper()
	canonical, err := step.Canonical(json.RawMessage(input))
	if err != nil {
		t.Fatal(err)
	}
	return step.Step{
		ID: id, TaskID: taskID, Project: "website-v2", Agent: "bo/codex", RunID: "run-1",
		ToolName: "Bash", Input: canonical, Fingerprint: step.Fingerprint(taskID, "Bash", canonical),
		Kind: "destructive", Target: "prod db", Amount: &step.Amount{Value: 12.5, Unit: "USD"}, Reason: "migrate",
		Status: step.Pending, CreatedAt: created, ExpiresAt: created.Add(step.DefaultPendingDeadline),
	}
}

// acceptedTask stores a task and accepts it, returning it at version 2.
func acceptedTask(t *testing.T, f fixture, id string) task.Task {
	t.Helper()
	tk := teamtest.RoutedTask(id, "website-v2", "ana/claude", "bo/codex", base)
	mustCreate(t, f, tk)
	m, _ := task.Accept(tk, "bo/codex", "", base.Add(time.Minute))
	if err := f.store.ApplyMove(context.Background(), 1, m); err != nil {
		t.Fatal(err)
	}
	return m.Task
}

// waitOnOwner is the move a pending step causes: the task waits for its owner.
func waitOnOwner(tk task.Task, at time.Time) task.Move {
	w := task.WaitingOnOwnerApproval
	from := tk.State
	next := tk
	next.State, next.WaitingOn, next.UpdatedAt = task.Waiting, &w, at
	return task.Move{Task: next, Event: task.Event{At: at, By: tk.Assignee, Action: "request_step", From: &from, To: task.Waiting}}
}

func TestStepInputRoundTripsAndTTLFollowsExpiry(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	s := sampleStep(t, "t1", "s1", `{"z": [1, 2.50, 1e3, "é \u2028 <b>"], "a": {"n": null, "t": true}}`, base)
	if err := f.store.SaveSteps(ctx, team.StepChange{Steps: []team.StepWrite{{Step: s}}}); err != nil {
		t.Fatal(err)
	}
	got, err := f.store.Step(ctx, "t1", "s1")
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Input) != string(s.Input) {
		t.Errorf("input\n got %s\nwant %s", got.Input, s.Input)
	}
	if asJSON(t, got) != asJSON(t, s) {
		t.Errorf("step\n got %s\nwant %s", asJSON(t, got), asJSON(t, s))
	}

	raw, err := f.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(f.tables.Steps),
		Key:       map[string]types.AttributeValue{"task_id": &types.AttributeValueMemberS{Value: "t1"}, "step_id": &types.AttributeValueMemberS{Value: "s1"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	ttl, ok := raw.Item["ttl"].(*types.AttributeValueMemberN)
	if !ok || ttl.Value != strconv.FormatInt(s.ExpiresAt.Unix(), 10) {
		t.Errorf("ttl = %#v, want N %d", raw.Item["ttl"], s.ExpiresAt.Unix())
	}
	if in, ok := raw.Item["input"].(*types.AttributeValueMemberS); !ok || in.Value != string(s.Input) {
		t.Errorf("input attribute = %#v, want the canonical JSON string", raw.Item["input"])
	}

	if _, err := f.store.Step(ctx, "t1", "nope"); !errors.Is(err, team.ErrNotFound) {
		t.Errorf("missing step: err = %v, want ErrNotFound", err)
	}
}

func TestSaveStepsIsAllOrNothing(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	tk := acceptedTask(t, f, "t1")

	// A new step and the task's move to waiting land together.
	s1 := sampleStep(t, "t1", "s1", `{"cmd":"rm -rf build"}`, base.Add(2*time.Minute))
	wait := waitOnOwner(tk, base.Add(2*time.Minute))
	if err := f.store.SaveSteps(ctx, team.StepChange{Steps: []team.StepWrite{{Step: s1}}, Move: &wait, PrevVersion: 2}); err != nil {
		t.Fatal(err)
	}
	if got, _ := f.store.Task(ctx, "t1"); got.Version != 3 || got.State != task.Waiting {
		t.Fatalf("after first save: version %d state %s", got.Version, got.State)
	}

	// A second call withdraws s1 and adds s2 — but claims s1 is approved, which it is not.
	withdrawn := s1
	withdrawn.Status = step.Withdrawn
	s2 := sampleStep(t, "t1", "s2", `{"cmd":"rm -rf dist"}`, base.Add(3*time.Minute))
	again := waitOnOwner(wait.Task, base.Add(3*time.Minute))
	err := f.store.SaveSteps(ctx, team.StepChange{
		Steps: []team.StepWrite{{Step: withdrawn, Prev: step.Approved}, {Step: s2}},
		Move:  &again, PrevVersion: 3,
	})
	if !errors.Is(err, team.ErrConflict) {
		t.Fatalf("wrong Prev: err = %v, want ErrConflict", err)
	}
	assertUnchanged := func(when string) {
		t.Helper()
		steps, err := f.store.StepsForTask(ctx, "t1")
		if err != nil {
			t.Fatal(err)
		}
		if len(steps) != 1 || steps[0].ID != "s1" || steps[0].Status != step.Pending {
			t.Errorf("%s: steps = %+v, want only s1 pending", when, steps)
		}
		got, _ := f.store.Task(ctx, "t1")
		hist, _ := f.store.History(ctx, "t1")
		if got.Version != 3 || len(hist) != 3 {
			t.Errorf("%s: task version %d, %d history lines; want 3 and 3", when, got.Version, len(hist))
		}
	}
	assertUnchanged("after a failed step condition")

	// Right step conditions, but the task moved meanwhile: still nothing lands.
	err = f.store.SaveSteps(ctx, team.StepChange{
		Steps: []team.StepWrite{{Step: withdrawn, Prev: step.Pending}, {Step: s2}},
		Move:  &again, PrevVersion: 2,
	})
	if !errors.Is(err, team.ErrConflict) {
		t.Fatalf("stale task version: err = %v, want ErrConflict", err)
	}
	assertUnchanged("after a failed task condition")

	// Adding a step that exists already is a conflict too.
	if err := f.store.SaveSteps(ctx, team.StepChange{Steps: []team.StepWrite{{Step: s1}}}); !errors.Is(err, team.ErrConflict) {
		t.Errorf("re-adding s1: err = %v, want ErrConflict", err)
	}

	// With every condition right, all of it lands.
	err = f.store.SaveSteps(ctx, team.StepChange{
		Steps: []team.StepWrite{{Step: withdrawn, Prev: step.Pending}, {Step: s2}},
		Move:  &again, PrevVersion: 3,
	})
	if err != nil {
		t.Fatal(err)
	}
	steps, _ := f.store.StepsForTask(ctx, "t1")
	if len(steps) != 2 || steps[0].Status != step.Withdrawn || steps[1].Status != step.Pending {
		t.Errorf("steps = %+v, want s1 withdrawn and s2 pending", steps)
	}
	if got, _ := f.store.Task(ctx, "t1"); got.Version != 4 {
		t.Errorf("task version %d, want 4", got.Version)
	}
}
