//go:build integration

package taskevents_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/aws/bus"
	"github.com/useprickle/prickle/shared/aws/store/storetest"
	"github.com/useprickle/prickle/shared/domain/event"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/jobs/taskevents"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/admin"
)

// crashing stands for writers killed between their store and their
// publish: after its first publish, which reaches the target, the events it
// is given never reach the bus.
type crashing struct {
	mu        sync.Mutex
	first     event.Handler
	published []string
	lost      []string
}

func (c *crashing) Publish(ctx context.Context, evs ...event.Event) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range evs {
		if len(c.published) == 0 {
			c.published = append(c.published, e.ID)
			if err := c.first(ctx, e); err != nil {
				return err
			}
			continue
		}
		c.lost = append(c.lost, e.ID)
	}
	return errors.New("writer killed before publishing")
}

// target counts how often it acts on each event, behind bus.Once as the
// wake and route targets are.
type target struct {
	mu   sync.Mutex
	acts map[string]int
}

func (tg *target) handle(_ context.Context, e event.Event) error {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	tg.acts[e.ID]++
	return nil
}

// deliver is a bus with one target: what EventBridge and the rules do.
type deliver struct{ h event.Handler }

func (d deliver) Publish(ctx context.Context, evs ...event.Event) error {
	for _, e := range evs {
		if err := d.h(ctx, e); err != nil {
			return err
		}
	}
	return nil
}

// TestWriterKilledBeforePublishLosesNoEvent: every move's events are lost
// by the writer; the tasks table's stream, read from the emulator and given
// to the task-events handler, republishes each with the writer's ID, and a
// target behind bus.Once acts on each exactly once, also when the stream
// delivers the batch again and when the writer's own publish did arrive.
func TestWriterKilledBeforePublishLosesNoEvent(t *testing.T) {
	fx := storetest.New(t)
	st := fx.Store
	ctx := context.Background()
	adm := admin.New(st)
	for _, err := range []error{
		adm.CreateProject(ctx, team.Project{Slug: "website-v2", Name: "Website v2", OwnerApprovalTypes: []string{"deploy"}}),
		adm.CreateOwner(ctx, team.Owner{Name: "ana"}), adm.CreateOwner(ctx, team.Owner{Name: "bo"}),
		adm.CreateAgent(ctx, "ana/claude", []string{"website-v2"}), adm.CreateAgent(ctx, "bo/codex", []string{"website-v2"}),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	ana := identity.Caller{Agent: "ana/claude", Owner: "ana", Kind: identity.KindAgent, Projects: []string{"website-v2"}, ProjectsKnown: true}
	bo := identity.Caller{Agent: "bo/codex", Owner: "bo", Kind: identity.KindAgent, Projects: []string{"website-v2"}, ProjectsKnown: true}

	tg := &target{acts: map[string]int{}}
	once := bus.Once("TestTarget", st, tg.handle)
	writer := &crashing{first: once}
	svc := team.New(st)
	svc.Events = writer

	// Two tasks through the whole lifecycle: one accepted by its requester,
	// one that needs its owner's approval, which bo (the assignee's owner) gives.
	var ids []string
	for _, deliverable := range []string{"other", "deploy"} {
		out, err := svc.HandOffTask(ctx, ana, team.HandOffInput{Project: "website-v2", Assignee: "bo/codex", Packet: task.Packet{
			Task: "ship " + deliverable, DeliverableType: deliverable, AcceptanceCriteria: []string{"done"}}})
		if err != nil {
			t.Fatal(err)
		}
		id := out.Task.ID
		ids = append(ids, id)
		steps := []error{
			func() error { _, err := svc.AcceptTask(ctx, bo, team.AcceptInput{TaskID: id}); return err }(),
			func() error {
				_, err := svc.ReturnResult(ctx, bo, team.ReturnResultInput{TaskID: id, Summary: "done", Evidence: []task.Evidence{{Kind: "note", Summary: "done"}}})
				return err
			}(),
			func() error {
				_, err := svc.ReviewResult(ctx, ana, team.ReviewInput{TaskID: id, Verdict: "accept"})
				return err
			}(),
		}
		for _, err := range steps {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	approved, err := st.Task(ctx, ids[1])
	if err != nil {
		t.Fatal(err)
	}
	if approved.State != task.Approval {
		t.Fatalf("deploy task is %s, want approval", approved.State)
	}
	if _, err := svc.DecideResult(ctx, "bo", ids[1], task.ResultRound(approved), true, "", "link"); err != nil {
		t.Fatal(err)
	}

	want := map[string]bool{}
	for _, id := range append(writer.published, writer.lost...) {
		want[id] = true
	}
	for _, id := range []string{
		"Task Routed:" + ids[0] + ":1", "Result Returned:" + ids[0] + ":3", "Task Completed:" + ids[0] + ":4",
		"Task Routed:" + ids[1] + ":1", "Result Returned:" + ids[1] + ":3", "Approval Requested:" + ids[1] + ":4",
		"Result Decided:" + ids[1] + ":5", "Task Completed:" + ids[1] + ":5",
	} {
		if !want[id] {
			t.Errorf("the writer never tried to publish %s (it published %v, lost %v)", id, writer.published, writer.lost)
		}
	}
	if len(want) != 8 {
		t.Errorf("the writer lost %d distinct events, want 8: %v", len(want), writer.lost)
	}

	if len(writer.lost) != 7 || tg.acts[writer.published[0]] != 1 {
		t.Fatalf("before the stream: published %v, lost %v, target acted %v", writer.published, writer.lost, tg.acts)
	}

	reader := storetest.NewStreamReader(fx.Client, storetest.NewStreamsClient(storetest.Endpoint(t)), fx.Tables.Tasks)
	batch, err := reader.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(batch.Records) == 0 {
		t.Fatal("the tasks table's stream carried no records")
	}
	h := taskevents.New(st, deliver{once})
	for range 2 { // the stream delivers a batch again after a failure
		if err := h.Handle(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	for id := range want {
		if n := tg.acts[id]; n != 1 {
			t.Errorf("target acted on %s %d times, want once", id, n)
		}
	}
	if len(tg.acts) != len(want) {
		t.Errorf("target acted on %v, want exactly the %d events of the moves", tg.acts, len(want))
	}
	// What the handler wrote is the moves' history lines, filed once each
	// (the second delivery filed nothing); they carry no events.
	again, err := reader.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range again.Records {
		if sk := r.Change.Keys["sk"].String(); r.EventName != "INSERT" || !strings.HasPrefix(sk, "HIST#") {
			t.Errorf("a second read of the stream gave %s of %s, want only filed history lines", r.EventName, sk)
		}
	}
	if len(again.Records) != 9 {
		t.Errorf("the handler filed %d lines, want the 9 of the two lifecycles", len(again.Records))
	}
	if err := h.Handle(ctx, again); err != nil {
		t.Fatal(err)
	}
	if len(tg.acts) != len(want) {
		t.Errorf("after the filed lines, target acted on %v, want exactly the %d events of the moves", tg.acts, len(want))
	}
}
