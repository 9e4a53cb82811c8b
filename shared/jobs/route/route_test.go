package route_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/useprickle/prickle/shared/aws/bus"
	"github.com/useprickle/prickle/shared/domain/event"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/jobs/route"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/teamtest"
)

// completed reads events/task-completed.json as the route function receives it.
func completed(t *testing.T) events.CloudWatchEvent {
	t.Helper()
	b, err := os.ReadFile("../../../events/task-completed.json")
	if err != nil {
		t.Fatal(err)
	}
	var cw events.CloudWatchEvent
	if err := json.Unmarshal(b, &cw); err != nil {
		t.Fatal(err)
	}
	return cw
}

func TestTaskCompletedRoutesItsDependents(t *testing.T) {
	st := teamtest.New()
	st.AddProject(team.Project{Slug: "website-v2"})
	at := time.Date(2026, 11, 29, 13, 0, 0, 0, time.UTC)
	mk := func(id string, state task.State, deps ...string) task.Task {
		if deps == nil {
			deps = []string{}
		}
		return task.Task{ID: id, Project: "website-v2", State: state, Requester: "ana/claude", Assignee: "bo/codex",
			Packet:    task.Packet{Task: id, DeliverableType: "code", AcceptanceCriteria: []string{"ok"}, Files: []string{}, DependsOn: deps},
			CreatedAt: at, UpdatedAt: at, Version: 1}
	}
	st.AddTask(mk("tsk_homepagehero01", task.Completed))
	st.AddTask(mk("tsk_other", task.Working))
	st.AddTask(mk("tsk_ready", task.Requested, "tsk_homepagehero01"))
	st.AddTask(mk("tsk_blocked", task.Requested, "tsk_homepagehero01", "tsk_other"))
	st.AddTask(mk("tsk_unrelated", task.Requested, "tsk_other"))

	rec := &bus.Recorder{}
	svc := team.New(st)
	svc.Events = rec
	h := bus.FromCloudWatch(route.New(svc).Handle)
	for range 2 { // EventBridge may deliver twice; the second routes nothing.
		if err := h(context.Background(), completed(t)); err != nil {
			t.Fatal(err)
		}
	}
	for id, want := range map[string]task.State{"tsk_ready": task.Routed, "tsk_blocked": task.Requested, "tsk_unrelated": task.Requested} {
		got, err := st.Task(context.Background(), id)
		if err != nil || got.State != want {
			t.Errorf("%s = %s (%v), want %s", id, got.State, err, want)
		}
	}
	evs := rec.Events()
	if len(evs) != 1 || evs[0].Type != event.TaskRouted || evs[0].TaskID != "tsk_ready" {
		t.Errorf("published %+v, want one Task Routed for tsk_ready", evs)
	}
}

type failingRouter struct{ calls int }

func (f *failingRouter) RouteDependents(context.Context, string, string) error {
	f.calls++
	return errors.New("throttled")
}

func TestOtherEventsAndFailures(t *testing.T) {
	f := &failingRouter{}
	h := route.New(f)
	if err := h.Handle(context.Background(), event.Event{ID: "x", Type: event.TaskRouted, Project: "p", TaskID: "t"}); err != nil || f.calls != 0 {
		t.Errorf("a Task Routed event: err %v, %d calls; want ignored", err, f.calls)
	}
	if err := h.Handle(context.Background(), event.Event{ID: "y", Type: event.TaskCompleted, Project: "p", TaskID: "t"}); err == nil {
		t.Error("a routing failure was swallowed; EventBridge would not retry")
	}
	if err := h.Handle(context.Background(), event.Event{ID: "z", Type: event.TaskCompleted}); err == nil {
		t.Error("an event naming no task was accepted")
	}
}
