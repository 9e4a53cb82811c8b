package stepexpiry

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/useprickle/prickle/shared/domain/event"
	"github.com/useprickle/prickle/shared/domain/step"
)

// recorder is the bus as the tests see it: what was published, in order.
type recorder struct{ events []event.Event }

func (r *recorder) Publish(_ context.Context, es ...event.Event) error {
	r.events = append(r.events, es...)
	return nil
}

type fakeExpirer struct {
	expired []step.Step
	err     error
}

func (f *fakeExpirer) ExpireStep(_ context.Context, s step.Step) error {
	f.expired = append(f.expired, s)
	return f.err
}

func readRecords(t *testing.T, name string) events.DynamoDBEvent {
	t.Helper()
	b, err := os.ReadFile("../../../events/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var e events.DynamoDBEvent
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	return e
}

func TestOnlyTTLRemovalsExpireSteps(t *testing.T) {
	ttl, user := readRecords(t, "step-expiry-ttl-remove.json"), readRecords(t, "step-expiry-user-remove.json")
	modify := readRecords(t, "step-expiry-ttl-remove.json")
	modify.Records[0].EventName = "MODIFY" // a write that left the step pending: nothing to do
	modify.Records[0].Change.NewImage = modify.Records[0].Change.OldImage
	otherService := readRecords(t, "step-expiry-ttl-remove.json")
	otherService.Records[0].UserIdentity.PrincipalID = "backup.amazonaws.com"

	all := events.DynamoDBEvent{Records: append(append(append(append([]events.DynamoDBEventRecord{}, user.Records...), modify.Records...), otherService.Records...), ttl.Records...)}
	f := &fakeExpirer{}
	if err := New(f, &recorder{}).Handle(context.Background(), all); err != nil {
		t.Fatal(err)
	}
	if len(f.expired) != 1 || f.expired[0].ID != "stp_dropstaging01" || f.expired[0].Status != step.Pending {
		t.Errorf("expired %+v, want only the TTL-removed step", f.expired)
	}
}

func TestFailuresAreReturnedAfterTryingEveryRecord(t *testing.T) {
	ttl := readRecords(t, "step-expiry-ttl-remove.json")
	two := events.DynamoDBEvent{Records: append(append([]events.DynamoDBEventRecord{}, ttl.Records...), ttl.Records...)}
	f := &fakeExpirer{err: errors.New("throttled")}
	if err := New(f, &recorder{}).Handle(context.Background(), two); err == nil {
		t.Fatal("failures were swallowed; the stream would not retry")
	}
	if len(f.expired) != 2 {
		t.Errorf("tried %d records, want 2", len(f.expired))
	}
	bad := readRecords(t, "step-expiry-ttl-remove.json")
	delete(bad.Records[0].Change.OldImage, "task_id")
	if err := New(&fakeExpirer{}, &recorder{}).Handle(context.Background(), bad); err == nil {
		t.Error("an undecodable image was ignored")
	}
}

// The stream republishes steps asked and decided with the writer's event
// IDs, so a crash between storing and publishing loses nothing and targets
// that already acted skip the copy.
func TestStepsAskedAndDecidedAreRepublished(t *testing.T) {
	insert, modify := readRecords(t, "step-requested-stream-insert.json"), readRecords(t, "step-decided-stream-modify.json")
	used := readRecords(t, "step-decided-stream-modify.json") // approved → consumed: not a decision
	used.Records[0].Change.OldImage = used.Records[0].Change.NewImage
	consumed := map[string]events.DynamoDBAttributeValue{}
	for k, v := range used.Records[0].Change.NewImage {
		consumed[k] = v
	}
	consumed["status"] = events.NewStringAttribute("consumed")
	used.Records[0].Change.NewImage = consumed

	rec, f := &recorder{}, &fakeExpirer{}
	all := events.DynamoDBEvent{Records: append(append(append([]events.DynamoDBEventRecord{}, insert.Records...), modify.Records...), used.Records...)}
	if err := New(f, rec).Handle(context.Background(), all); err != nil {
		t.Fatal(err)
	}
	if len(f.expired) != 0 {
		t.Errorf("expired %v; no record was a TTL removal", f.expired)
	}
	if len(rec.events) != 2 {
		t.Fatalf("published %d events, want 2: %+v", len(rec.events), rec.events)
	}
	asked, decided := rec.events[0], rec.events[1]
	if asked.Type != event.StepRequested || asked.ID != "Step Requested:tsk_expirydemo0001:stp_dropstaging01:pending" || asked.Actor != "bo/codex" {
		t.Errorf("asked = %s %s by %s", asked.Type, asked.ID, asked.Actor)
	}
	if decided.Type != event.StepDecided || decided.ID != "Step Decided:tsk_expirydemo0001:stp_dropstaging01:approved" || decided.Actor != "owner:bo" || decided.Step == nil || decided.Step.Message != "ok, staging only" {
		t.Errorf("decided = %s %s by %s, step %+v", decided.Type, decided.ID, decided.Actor, decided.Step)
	}
	// The same IDs the writers publish with (team.RequestStep, team.DecideStep).
	if want := event.ForStep(event.StepDecided, *decided.Step, "owner:bo", *decided.Step.DecidedAt); want.ID != decided.ID || !want.At.Equal(decided.At) {
		t.Errorf("republished %s at %s; the writer publishes %s at %s", decided.ID, decided.At, want.ID, want.At)
	}
}
