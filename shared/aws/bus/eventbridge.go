// Package bus carries Prickle's events from the service that stored a change
// to the functions that react to it: EventBridge in the cloud (PutEvents,
// retried until every entry is accepted), an in-process bus locally that
// follows template.yaml's rules, and Once, which makes each target act on
// an event once although EventBridge delivers at least once.
package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"github.com/useprickle/prickle/shared/domain/event"
	"github.com/useprickle/prickle/shared/kit/wait"
)

// PutEventsAPI is the one call the EventBridge publisher makes, so tests
// can inject failures; *eventbridge.Client satisfies it, and so does
// PutEventsFunc of its method value.
type PutEventsAPI interface {
	PutEvents(ctx context.Context, in *eventbridge.PutEventsInput, optFns ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error)
}

// PutEventsFunc is a PutEventsAPI made of the client's method value, which
// the functions hold instead of the client: an interface holding the client
// would make a binary that executes templates link every EventBridge
// operation (see store's operations).
type PutEventsFunc func(ctx context.Context, in *eventbridge.PutEventsInput, optFns ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error)

// PutEvents calls f.
func (f PutEventsFunc) PutEvents(ctx context.Context, in *eventbridge.PutEventsInput, optFns ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error) {
	return f(ctx, in, optFns...)
}

// PutEvents' limits: entries per call and bytes per call.
const (
	maxBatchEntries = 10
	maxBatchBytes   = 256 * 1024
)

// EventBridge publishes events to an EventBridge bus, retrying failed calls
// and failed entries, because a decision stored but never published would
// leave a run waiting forever.
type EventBridge struct {
	API     PutEventsAPI
	BusName string
	// MaxAttempts bounds the PutEvents calls per batch (default 5).
	MaxAttempts int
	// Backoff is the wait before the second attempt; it doubles after each (default 100ms).
	Backoff time.Duration
	// Sleep waits between attempts; tests inject one that does not.
	Sleep func(ctx context.Context, d time.Duration) error
}

var _ event.Publisher = (*EventBridge)(nil)

// NewEventBridge builds the publisher with the default retry bound and real sleeps.
func NewEventBridge(api PutEventsAPI, busName string) *EventBridge {
	return &EventBridge{API: api, BusName: busName, MaxAttempts: 5, Backoff: 100 * time.Millisecond, Sleep: wait.For}
}

// entry is one event ready for PutEvents.
type entry struct {
	id  string
	req types.PutEventsRequestEntry
}

// Publish sends the events in batches of at most ten entries (and 256 KB).
// Within a batch, a failed call retries every entry and a partly failed call
// (FailedEntryCount > 0) retries only the entries that carry an ErrorCode;
// after MaxAttempts the error names every event still not accepted. Event IDs
// are deterministic, so a retry after an ambiguous failure can deliver an
// event twice; targets deduplicate with Once.
func (b *EventBridge) Publish(ctx context.Context, events ...event.Event) error {
	entries := make([]entry, 0, len(events))
	for _, e := range events {
		detail, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("publish %s: encode detail: %w", e.ID, err)
		}
		en := entry{id: e.ID, req: types.PutEventsRequestEntry{
			EventBusName: aws.String(b.BusName),
			Source:       aws.String(event.Source),
			DetailType:   aws.String(string(e.Type)),
			Detail:       aws.String(string(detail)),
		}}
		if !e.At.IsZero() {
			en.req.Time = aws.Time(e.At)
		}
		if entrySize(en.req) > maxBatchBytes {
			return fmt.Errorf("publish %s: event is %d bytes, over EventBridge's %d", e.ID, entrySize(en.req), maxBatchBytes)
		}
		entries = append(entries, en)
	}
	var failed []string
	var errs []error
	for _, batch := range batches(entries) {
		if err := b.putBatch(ctx, batch); err != nil {
			var nf *notAcceptedError
			if errors.As(err, &nf) {
				failed = append(failed, nf.ids...)
			}
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("publish to bus %s: events not accepted [%s]: %w", b.BusName, strings.Join(failed, ", "), errors.Join(errs...))
	}
	return nil
}

// entrySize is how EventBridge counts an entry against the 256 KB limit.
func entrySize(e types.PutEventsRequestEntry) int {
	n := len(aws.ToString(e.Source)) + len(aws.ToString(e.DetailType)) + len(aws.ToString(e.Detail))
	if e.Time != nil {
		n += 14
	}
	return n
}

// batches splits entries, in order, into PutEvents calls within both limits.
func batches(entries []entry) [][]entry {
	var out [][]entry
	var cur []entry
	size := 0
	for _, e := range entries {
		s := entrySize(e.req)
		if len(cur) == maxBatchEntries || (len(cur) > 0 && size+s > maxBatchBytes) {
			out = append(out, cur)
			cur, size = nil, 0
		}
		cur = append(cur, e)
		size += s
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// notAcceptedError names the events of a batch still not accepted after every attempt.
type notAcceptedError struct {
	ids      []string
	attempts int
	last     error
}

func (e *notAcceptedError) Error() string {
	return fmt.Sprintf("events %s not accepted after %d attempts: %v", strings.Join(e.ids, ", "), e.attempts, e.last)
}

func (e *notAcceptedError) Unwrap() error { return e.last }

func (b *EventBridge) putBatch(ctx context.Context, pending []entry) error {
	attempts := b.MaxAttempts
	if attempts < 1 {
		attempts = 1
	}
	sleep := b.Sleep
	if sleep == nil {
		sleep = wait.For
	}
	wait := b.Backoff
	var last error
	attempt := 0
	for {
		attempt++
		reqs := make([]types.PutEventsRequestEntry, len(pending))
		for i, e := range pending {
			reqs[i] = e.req
		}
		out, err := b.API.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: reqs})
		switch {
		case err != nil:
			last = fmt.Errorf("PutEvents: %w", err)
		case out.FailedEntryCount == 0:
			return nil
		case len(out.Entries) != len(pending):
			last = fmt.Errorf("PutEvents answered %d entries for %d sent, %d failed", len(out.Entries), len(pending), out.FailedEntryCount)
		default:
			var still []entry
			var codes []string
			for i, r := range out.Entries {
				if r.ErrorCode != nil && *r.ErrorCode != "" {
					still = append(still, pending[i])
					codes = append(codes, pending[i].id+": "+aws.ToString(r.ErrorCode)+" "+aws.ToString(r.ErrorMessage))
				}
			}
			if len(still) == 0 { // FailedEntryCount without an ErrorCode: trust the count, resend all.
				still = pending
			}
			pending = still
			last = fmt.Errorf("PutEvents failed entries: %s", strings.Join(codes, "; "))
		}
		if attempt >= attempts {
			break
		}
		if err := sleep(ctx, wait); err != nil {
			last = fmt.Errorf("%w (gave up waiting: %v)", last, err)
			break
		}
		wait *= 2
	}
	ids := make([]string, len(pending))
	for i, e := range pending {
		ids[i] = e.id
	}
	return &notAcceptedError{ids: ids, attempts: attempt, last: last}
}
