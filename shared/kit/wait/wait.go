// Package wait holds the one context-aware sleep the retry loops share
// (the event bus, the waker, the pull endpoint and the runner).
package wait

import (
	"context"
	"time"
)

// For waits d or until ctx ends, whichever is first, so a retry's backoff
// never outlives the request or the process that asked for it.
func For(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
