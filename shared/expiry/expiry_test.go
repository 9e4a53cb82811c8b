package expiry

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/useprickle/prickle/shared/step"
)

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
	b, err := os.ReadFile("../../events/" + name)
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
	modify.Records[0].EventName = "MODIFY"
	otherService := readRecords(t, "step-expiry-ttl-remove.json")
	otherService.Records[0].UserIdentity.PrincipalID = "backup.amazonaws.com"

	all := events.DynamoDBEvent{Records: append(append(append(append([]events.DynamoDBEventRecord{}, user.Records...), modify.Records...), otherService.Records...), ttl.Records...)}
	f := &fakeExpirer{}
	if err := New(f).Handle(context.Background(), all); err != nil {
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
	if err := New(f).Handle(context.Background(), two); err == nil {
		t.Fatal("failures were swallowed; the stream would not retry")
	}
	if len(f.expired) != 2 {
		t.Errorf("tried %d records, want 2", len(f.expired))
	}
	bad := readRecords(t, "step-expiry-ttl-remove.json")
	delete(bad.Records[0].Change.OldImage, "task_id")
	if err := New(&fakeExpirer{}).Handle(context.Background(), bad); err == nil {
		t.Error("an undecodable image was ignored")
	}
}
