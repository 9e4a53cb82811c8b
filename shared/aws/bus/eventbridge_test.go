package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"github.com/useprickle/prickle/shared/domain/event"
)

// scriptedAPI answers PutEvents from a script: each call takes the next
// answer; an answer fails the whole call, or fails the entries at given
// positions of that call, or (nil) accepts everything.
type scriptedAPI struct {
	calls   [][]types.PutEventsRequestEntry
	answers []func(n int) (*eventbridge.PutEventsOutput, error)
}

func (s *scriptedAPI) PutEvents(_ context.Context, in *eventbridge.PutEventsInput, _ ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error) {
	s.calls = append(s.calls, in.Entries)
	var answer func(int) (*eventbridge.PutEventsOutput, error)
	if i := len(s.calls) - 1; i < len(s.answers) {
		answer = s.answers[i]
	}
	if answer == nil {
		return acceptAll(len(in.Entries)), nil
	}
	return answer(len(in.Entries))
}

func acceptAll(n int) *eventbridge.PutEventsOutput {
	out := &eventbridge.PutEventsOutput{Entries: make([]types.PutEventsResultEntry, n)}
	for i := range out.Entries {
		out.Entries[i].EventId = aws.String(fmt.Sprintf("eb-%d", i))
	}
	return out
}

func callFails(int) (*eventbridge.PutEventsOutput, error) {
	return nil, errors.New("connection reset")
}

func entriesFail(positions ...int) func(int) (*eventbridge.PutEventsOutput, error) {
	return func(n int) (*eventbridge.PutEventsOutput, error) {
		out := acceptAll(n)
		for _, p := range positions {
			out.Entries[p] = types.PutEventsResultEntry{ErrorCode: aws.String("InternalFailure"), ErrorMessage: aws.String("try again")}
		}
		out.FailedEntryCount = int32(len(positions))
		return out, nil
	}
}

func testEvents(n int) []event.Event {
	out := make([]event.Event, n)
	for i := range out {
		out[i] = event.Event{ID: fmt.Sprintf("Task Routed:t%d:1", i), Type: event.TaskRouted, TaskID: fmt.Sprintf("t%d", i), Project: "p", At: time.Date(2026, 11, 29, 9, 0, i, 0, time.UTC)}
	}
	return out
}

// newTestBridge returns a publisher over api that records its waits instead of sleeping.
func newTestBridge(api PutEventsAPI) (*EventBridge, *[]time.Duration) {
	var waits []time.Duration
	b := NewEventBridge(api, "prickle-test")
	b.Sleep = func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	return b, &waits
}

func detailIDs(entries []types.PutEventsRequestEntry) []string {
	ids := make([]string, len(entries))
	for i, e := range entries {
		var ev event.Event
		if err := json.Unmarshal([]byte(aws.ToString(e.Detail)), &ev); err != nil {
			panic(err)
		}
		ids[i] = ev.ID
	}
	return ids
}

func TestEntriesCarrySourceTypeDetailAndBus(t *testing.T) {
	api := &scriptedAPI{}
	b, _ := newTestBridge(api)
	e := testEvents(1)[0]
	if err := b.Publish(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	got := api.calls[0][0]
	if aws.ToString(got.Source) != "prickle" || aws.ToString(got.DetailType) != "Task Routed" || aws.ToString(got.EventBusName) != "prickle-test" {
		t.Errorf("entry = source %q, detail-type %q, bus %q", aws.ToString(got.Source), aws.ToString(got.DetailType), aws.ToString(got.EventBusName))
	}
	var back event.Event
	if err := json.Unmarshal([]byte(aws.ToString(got.Detail)), &back); err != nil || back.ID != e.ID || back.TaskID != "t0" {
		t.Errorf("detail = %s (%v), want the event's JSON", aws.ToString(got.Detail), err)
	}
	if !aws.ToTime(got.Time).Equal(e.At) {
		t.Errorf("time = %v, want %v", aws.ToTime(got.Time), e.At)
	}
}

func TestBatchesOfAtMostTen(t *testing.T) {
	api := &scriptedAPI{}
	b, _ := newTestBridge(api)
	if err := b.Publish(context.Background(), testEvents(23)...); err != nil {
		t.Fatal(err)
	}
	var sizes []int
	var all []string
	for _, c := range api.calls {
		sizes = append(sizes, len(c))
		all = append(all, detailIDs(c)...)
	}
	if fmt.Sprint(sizes) != "[10 10 3]" {
		t.Errorf("batch sizes = %v, want [10 10 3]", sizes)
	}
	for i, id := range all {
		if id != testEvents(23)[i].ID {
			t.Fatalf("event %d sent as %s: order not kept", i, id)
		}
	}
}

func TestFailedCallIsRetriedWithBackoff(t *testing.T) {
	api := &scriptedAPI{answers: []func(int) (*eventbridge.PutEventsOutput, error){callFails, callFails}}
	b, waits := newTestBridge(api)
	if err := b.Publish(context.Background(), testEvents(3)...); err != nil {
		t.Fatal(err)
	}
	if len(api.calls) != 3 {
		t.Fatalf("%d calls, want 3 (two failures, then success)", len(api.calls))
	}
	for _, c := range api.calls {
		if len(c) != 3 {
			t.Errorf("a failed call resent %d entries, want all 3", len(c))
		}
	}
	if fmt.Sprint(*waits) != "[100ms 200ms]" {
		t.Errorf("waits = %v, want [100ms 200ms]", *waits)
	}
}

func TestOnlyFailedEntriesAreRetried(t *testing.T) {
	api := &scriptedAPI{answers: []func(int) (*eventbridge.PutEventsOutput, error){entriesFail(1, 3), entriesFail(0)}}
	b, _ := newTestBridge(api)
	evs := testEvents(4)
	if err := b.Publish(context.Background(), evs...); err != nil {
		t.Fatal(err)
	}
	if len(api.calls) != 3 {
		t.Fatalf("%d calls, want 3", len(api.calls))
	}
	if got := fmt.Sprint(detailIDs(api.calls[1])); got != fmt.Sprint([]string{evs[1].ID, evs[3].ID}) {
		t.Errorf("second call sent %s, want only the two failed entries", got)
	}
	if got := fmt.Sprint(detailIDs(api.calls[2])); got != fmt.Sprint([]string{evs[1].ID}) {
		t.Errorf("third call sent %s, want only the entry that failed again", got)
	}
}

func TestGivesUpAfterTheBoundNamingTheEvents(t *testing.T) {
	always := entriesFail(0)
	api := &scriptedAPI{answers: []func(int) (*eventbridge.PutEventsOutput, error){entriesFail(0, 1), always, always, always, always, always}}
	b, waits := newTestBridge(api)
	evs := testEvents(3)
	err := b.Publish(context.Background(), evs...)
	if err == nil {
		t.Fatal("publish succeeded although an entry never was accepted")
	}
	if len(api.calls) != 5 || len(*waits) != 4 {
		t.Errorf("%d calls and %d waits, want 5 and 4", len(api.calls), len(*waits))
	}
	if !strings.Contains(err.Error(), evs[0].ID) || strings.Contains(err.Error(), evs[2].ID) {
		t.Errorf("err = %v, want it to name %s only", err, evs[0].ID)
	}
	if !strings.Contains(err.Error(), "InternalFailure") {
		t.Errorf("err = %v, want the entry's error code", err)
	}
}

func TestCancelledContextStopsRetrying(t *testing.T) {
	api := &scriptedAPI{answers: []func(int) (*eventbridge.PutEventsOutput, error){callFails, callFails}}
	b := NewEventBridge(api, "prickle-test")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := b.Publish(ctx, testEvents(1)...)
	if err == nil || !errors.Is(err, context.Canceled) && !strings.Contains(err.Error(), "canceled") {
		t.Fatalf("err = %v, want one saying the context was cancelled", err)
	}
	if len(api.calls) != 1 {
		t.Errorf("%d calls after cancel, want 1", len(api.calls))
	}
}

func TestOversizedEventIsRefusedBeforeSending(t *testing.T) {
	api := &scriptedAPI{}
	b, _ := newTestBridge(api)
	e := testEvents(1)[0]
	e.Actor = strings.Repeat("x", maxBatchBytes)
	if err := b.Publish(context.Background(), e); err == nil || !strings.Contains(err.Error(), e.ID) {
		t.Fatalf("err = %v, want one naming %s", err, e.ID)
	}
	if len(api.calls) != 0 {
		t.Errorf("%d calls, want none", len(api.calls))
	}
}

func TestBatchesRespectTheByteLimit(t *testing.T) {
	evs := testEvents(4)
	for i := range evs {
		evs[i].Actor = strings.Repeat("x", 100*1024)
	}
	api := &scriptedAPI{}
	b, _ := newTestBridge(api)
	if err := b.Publish(context.Background(), evs...); err != nil {
		t.Fatal(err)
	}
	if len(api.calls) != 2 {
		t.Errorf("%d calls for 4 events of 100 KB, want 2 (two per 256 KB call)", len(api.calls))
	}
}
