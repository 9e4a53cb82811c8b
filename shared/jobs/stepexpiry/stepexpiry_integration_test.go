//go:build integration

package stepexpiry_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/useprickle/prickle/shared/aws/bus"
	"github.com/useprickle/prickle/shared/aws/store/storetest"
	"github.com/useprickle/prickle/shared/domain/event"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/jobs/stepexpiry"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/admin"
)

func replay(t *testing.T, h *stepexpiry.Handler, name string) {
	t.Helper()
	b, err := os.ReadFile("../../../events/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var e events.DynamoDBEvent
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	if err := h.Handle(context.Background(), e); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// TestReplayedStreamRecords replays events/step-expiry-*.json: a user's
// delete changes nothing; the TTL removal of the pending step takes the task
// waiting on its owner back to working and publishes Step Expired.
func TestReplayedStreamRecords(t *testing.T) {
	st := storetest.New(t).Store
	ctx := context.Background()
	adm := admin.New(st)
	for _, err := range []error{
		adm.CreateProject(ctx, team.Project{Slug: "website-v2", Name: "Website v2"}),
		adm.CreateOwner(ctx, team.Owner{Name: "ana"}), adm.CreateOwner(ctx, team.Owner{Name: "bo"}),
		adm.CreateAgent(ctx, "ana/claude", []string{"website-v2"}), adm.CreateAgent(ctx, "bo/codex", []string{"website-v2"}),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	// The task of the sample record, waiting on the owner for that step (v2),
	// which TTL has since deleted from the steps table.
	created := time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC)
	tk := task.Task{ID: "tsk_expirydemo0001", Project: "website-v2", State: task.Working, Requester: "ana/claude", Assignee: "bo/codex",
		Packet:    task.Packet{Task: "clean staging", DeliverableType: "other", AcceptanceCriteria: []string{"done"}, Files: []string{}, DependsOn: []string{}},
		CreatedAt: created, UpdatedAt: created, Version: 1}
	if err := st.CreateTask(ctx, tk, task.Event{At: created, By: "ana/claude", Action: "hand_off", To: task.Working}); err != nil {
		t.Fatal(err)
	}
	wait := task.WaitingOnOwnerApproval
	waiting := tk
	waiting.State, waiting.WaitingOn, waiting.UpdatedAt = task.Waiting, &wait, created.Add(time.Hour)
	from := task.Working
	if err := st.ApplyMove(ctx, 1, task.Move{Task: waiting, Event: task.Event{At: waiting.UpdatedAt, By: "bo/codex", Action: "request_step", From: &from, To: task.Waiting}}); err != nil {
		t.Fatal(err)
	}

	rec := &bus.Recorder{}
	svc := team.New(st)
	svc.Events = rec
	svc.Now = func() time.Time { return time.Date(2026, 11, 29, 9, 20, 12, 0, time.UTC) }
	h := stepexpiry.New(svc, svc.Events)

	replay(t, h, "step-expiry-user-remove.json")
	if got, _ := st.Task(ctx, tk.ID); got.State != task.Waiting || len(rec.Events()) != 0 {
		t.Fatalf("after a user's delete: task %s, events %v; want untouched", got.State, rec.Events())
	}

	replay(t, h, "step-expiry-ttl-remove.json")
	got, err := st.Task(ctx, tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != task.Working || got.WaitingOn != nil {
		t.Errorf("task after TTL expiry = %s (waiting on %v), want working", got.State, got.WaitingOn)
	}
	hist, err := st.History(ctx, tk.ID)
	if err != nil || hist[len(hist)-1].Action != "step_expired" || hist[len(hist)-1].By != task.System {
		t.Errorf("last history line = %+v (%v), want step_expired by prickle", hist[len(hist)-1], err)
	}
	evs := rec.Events()
	if len(evs) != 1 || evs[0].Type != event.StepExpired || evs[0].Step == nil || evs[0].Step.ID != "stp_dropstaging01" || evs[0].TaskID != tk.ID {
		t.Fatalf("published %+v, want one Step Expired for stp_dropstaging01", evs)
	}

	// The stream retries batches: replaying the record again moves nothing.
	replay(t, h, "step-expiry-ttl-remove.json")
	if again, _ := st.Task(ctx, tk.ID); again.Version != got.Version {
		t.Errorf("a replayed record moved the task again (v%d → v%d)", got.Version, again.Version)
	}
}
