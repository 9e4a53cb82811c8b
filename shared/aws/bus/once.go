package bus

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/useprickle/prickle/shared/domain/event"
)

// Deduper remembers which events each target has handled, so that an event
// EventBridge delivers twice (a retried PutEvents, an at-least-once
// delivery) acts once. The store implements it on the directory table.
type Deduper interface {
	// Claim takes (target, eventID) for holder until leaseUntil, unless the
	// event is done or another holder's lease is still live at now; then
	// claimed is false and done says which of the two it is.
	Claim(ctx context.Context, target, eventID, holder string, now, leaseUntil time.Time) (claimed, done bool, err error)
	// Finish marks the event done for the target, for good.
	Finish(ctx context.Context, target, eventID, holder string) error
	// Release gives a claim back so the next delivery runs the handler again.
	Release(ctx context.Context, target, eventID, holder string) error
}

// Lease is how long a claim keeps other deliveries of the same event away:
// longer than a Lambda may run (15 minutes), so a live handler is never
// doubled, short against EventBridge's 24 hours of retries.
const Lease = 16 * time.Minute

// ErrInProgress means another delivery of the same event holds a live claim;
// returning it makes EventBridge retry later, when that one has finished or
// its lease has lapsed.
var ErrInProgress = errors.New("event is being handled by another delivery")

// Once wraps a target's handler so each event ID is acted on once per target.
//
// The order is claim, run, finish. Record-then-run would lose the event when
// the handler fails; run-then-record would run it twice when recording
// fails. Here a failed handler releases its claim (and, should the release
// fail too, the lease lapses), so EventBridge's retry runs it again: nothing
// is lost. A duplicate arriving while the handler runs meets the live claim
// and is retried later; one arriving after Finish is dropped. The one window
// left, a crash or failed Finish after the handler succeeded, re-runs the
// handler after the lease; the handlers are idempotent for that (the waker
// skips a wake already delivered for the event, routing and expiry are
// conditional writes that find the work done).
func Once(target string, d Deduper, h event.Handler) event.Handler {
	return OnceAt(target, d, h, time.Now)
}

// OnceAt is Once with an injected clock, for tests of the lease.
func OnceAt(target string, d Deduper, h event.Handler, now func() time.Time) event.Handler {
	return func(ctx context.Context, e event.Event) error {
		if e.ID == "" {
			return fmt.Errorf("%s: event of type %s has no id", target, e.Type)
		}
		holder := newHolder()
		at := now().UTC()
		claimed, done, err := d.Claim(ctx, target, e.ID, holder, at, at.Add(Lease))
		if err != nil {
			return fmt.Errorf("%s: claim event %s: %w", target, e.ID, err)
		}
		if !claimed {
			if done {
				slog.InfoContext(ctx, "event already handled; skipped", "target", target, "event", e.ID)
				return nil
			}
			return fmt.Errorf("%s: event %s: %w", target, e.ID, ErrInProgress)
		}
		if err := h(ctx, e); err != nil {
			if rerr := d.Release(ctx, target, e.ID, holder); rerr != nil {
				slog.ErrorContext(ctx, "release claim failed; the next delivery waits for the lease", "target", target, "event", e.ID, "error", rerr.Error())
			}
			return fmt.Errorf("%s: handle event %s: %w", target, e.ID, err)
		}
		if err := d.Finish(ctx, target, e.ID, holder); err != nil {
			// The work is done; a duplicate after the lease re-runs an idempotent handler.
			slog.ErrorContext(ctx, "finish claim failed after the handler succeeded", "target", target, "event", e.ID, "error", err.Error())
		}
		return nil
	}
}

func newHolder() string {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err))
	}
	return hex.EncodeToString(b)
}
