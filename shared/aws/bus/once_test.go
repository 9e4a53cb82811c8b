package bus

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/domain/event"
)

// memDeduper is an in-memory Deduper with the store's semantics.
type memDeduper struct {
	mu         sync.Mutex
	items      map[string]memClaim
	failFinish bool
}

type memClaim struct {
	holder string
	done   bool
	until  time.Time
}

func newMemDeduper() *memDeduper { return &memDeduper{items: map[string]memClaim{}} }

func (m *memDeduper) Claim(_ context.Context, target, id, holder string, now, until time.Time) (bool, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := target + "#" + id
	c, ok := m.items[k]
	if ok && (c.done || now.Before(c.until)) {
		return false, c.done, nil
	}
	m.items[k] = memClaim{holder: holder, until: until}
	return true, false, nil
}

func (m *memDeduper) Finish(_ context.Context, target, id, holder string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.failFinish {
		return errors.New("throttled")
	}
	k := target + "#" + id
	if c := m.items[k]; c.holder == holder {
		c.done = true
		m.items[k] = c
	}
	return nil
}

func (m *memDeduper) Release(_ context.Context, target, id, holder string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := target + "#" + id
	if c := m.items[k]; c.holder == holder && !c.done {
		delete(m.items, k)
	}
	return nil
}

type counter struct {
	mu   sync.Mutex
	runs map[string]int
	fail error
}

func (c *counter) handle(_ context.Context, e event.Event) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.runs == nil {
		c.runs = map[string]int{}
	}
	c.runs[e.ID]++
	return c.fail
}

var decided = event.Event{ID: "Step Decided:t1:s1:approved", Type: event.StepDecided, TaskID: "t1"}

func TestOnceRunsADuplicateOnce(t *testing.T) {
	d, c := newMemDeduper(), &counter{}
	h := Once("WakeupFunction", d, c.handle)
	for range 3 {
		if err := h(context.Background(), decided); err != nil {
			t.Fatal(err)
		}
	}
	if c.runs[decided.ID] != 1 {
		t.Errorf("handler ran %d times, want 1", c.runs[decided.ID])
	}
}

func TestOnceIsPerTarget(t *testing.T) {
	d, wake, notify := newMemDeduper(), &counter{}, &counter{}
	hw, hn := Once("WakeupFunction", d, wake.handle), Once("NotifyFunction", d, notify.handle)
	for range 2 {
		_ = hw(context.Background(), decided)
		_ = hn(context.Background(), decided)
	}
	if wake.runs[decided.ID] != 1 || notify.runs[decided.ID] != 1 {
		t.Errorf("wake ran %d, notify %d times; want 1 each", wake.runs[decided.ID], notify.runs[decided.ID])
	}
}

func TestOnceLosesNothingWhenTheHandlerFails(t *testing.T) {
	d, c := newMemDeduper(), &counter{fail: errors.New("wake URL down")}
	h := Once("WakeupFunction", d, c.handle)
	if err := h(context.Background(), decided); err == nil {
		t.Fatal("a failed handler was reported as done")
	}
	c.fail = nil
	if err := h(context.Background(), decided); err != nil {
		t.Fatalf("retry: %v", err)
	}
	if err := h(context.Background(), decided); err != nil {
		t.Fatal(err)
	}
	if c.runs[decided.ID] != 2 {
		t.Errorf("handler ran %d times, want 2 (the failure, then the retry; not the duplicate)", c.runs[decided.ID])
	}
}

func TestOnceDefersADuplicateWhileTheFirstRuns(t *testing.T) {
	d := newMemDeduper()
	inner := &counter{}
	var h event.Handler
	var innerErr error
	h = Once("WakeupFunction", d, func(ctx context.Context, e event.Event) error {
		if inner.runs[e.ID] == 0 {
			_ = inner.handle(ctx, e)
			innerErr = h(ctx, e) // the same event delivered again meanwhile
		}
		return nil
	})
	if err := h(context.Background(), decided); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(innerErr, ErrInProgress) {
		t.Errorf("concurrent duplicate: err = %v, want ErrInProgress so EventBridge retries it", innerErr)
	}
}

func TestOnceTakesOverALapsedClaim(t *testing.T) {
	d, c := newMemDeduper(), &counter{}
	start := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	// A delivery claimed the event and crashed: no Finish, no Release.
	if ok, _, _ := d.Claim(context.Background(), "WakeupFunction", decided.ID, "crashed", start, start.Add(Lease)); !ok {
		t.Fatal("setup claim failed")
	}
	now := start.Add(time.Minute)
	h := OnceAt("WakeupFunction", d, c.handle, func() time.Time { return now })
	if err := h(context.Background(), decided); !errors.Is(err, ErrInProgress) {
		t.Fatalf("within the lease: err = %v, want ErrInProgress", err)
	}
	now = start.Add(Lease)
	if err := h(context.Background(), decided); err != nil {
		t.Fatalf("after the lease: %v", err)
	}
	if c.runs[decided.ID] != 1 {
		t.Errorf("handler ran %d times after the lease, want 1", c.runs[decided.ID])
	}
}

func TestOnceSucceedsWhenOnlyFinishFails(t *testing.T) {
	d, c := newMemDeduper(), &counter{}
	d.failFinish = true
	if err := Once("WakeupFunction", d, c.handle)(context.Background(), decided); err != nil {
		t.Fatalf("err = %v; the handler's work is done, so the delivery succeeded", err)
	}
}

func TestOnceRefusesAnEventWithoutID(t *testing.T) {
	if err := Once("WakeupFunction", newMemDeduper(), (&counter{}).handle)(context.Background(), event.Event{Type: event.TaskRouted}); err == nil {
		t.Fatal("an event without id was handled")
	}
}
