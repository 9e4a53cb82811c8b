//go:build integration

package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/domain/wakeup"
)

// The writes behind an operator's answers and the bus's bookkeeping: a
// retry after a lost answer must not answer a landed change wrongly.
func TestRetriedBookkeepingThatLandedAnswersRight(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

	t.Run("a held wake-up is counted", func(t *testing.T) {
		_, p, st := lossyStore(t)
		w := wakeup.Pending{ID: wakeup.PendingID("Task Routed:tsk_hold:1", "alice/writer", now), Agent: "alice/writer", TaskID: "tsk_hold",
			Reason: wakeup.ReasonTaskRouted, EventID: "Task Routed:tsk_hold:1", CreatedAt: now}
		if err := st.PutPendingWakeup(ctx, w); err != nil {
			t.Fatal(err)
		}
		lose(p, "UpdateItem")
		moved, err := st.HoldWakeups(ctx, "alice/writer", now, now.Add(wakeup.PendingRetention+48*time.Hour))
		lost(t, p, 1)
		if err != nil || moved != 1 {
			t.Errorf("HoldWakeups whose move landed, retried = %d, %v; want 1", moved, err)
		}
	})

	t.Run("a released claim is released", func(t *testing.T) {
		_, p, st := lossyStore(t)
		if claimed, _, err := st.Claim(ctx, "NotifyFunction", "evt_release", "holder-1", now, now.Add(time.Minute)); err != nil || !claimed {
			t.Fatalf("Claim = %v, %v", claimed, err)
		}
		lose(p, "DeleteItem")
		err := st.Release(ctx, "NotifyFunction", "evt_release", "holder-1")
		lost(t, p, 1)
		if err != nil {
			t.Errorf("Release that landed, retried = %v; want nil", err)
		}
		if claimed, _, err := st.Claim(ctx, "NotifyFunction", "evt_release", "holder-2", now, now.Add(time.Minute)); err != nil || !claimed {
			t.Errorf("the next delivery's claim = %v, %v; want claimed", claimed, err)
		}
		if err := st.Release(ctx, "NotifyFunction", "evt_release", "holder-1"); err == nil {
			t.Error("holder-1 released holder-2's claim")
		}
	})

	t.Run("a reopened sign-in window tells its count", func(t *testing.T) {
		_, p, st := lossyStore(t)
		for range 3 {
			if _, err := st.AllowSignInRequest(ctx, "alice", "203.0.113.7", now); err != nil {
				t.Fatal(err)
			}
		}
		lose(p, "DeleteItem")
		n, err := st.ReopenSignIn(ctx, "alice", now)
		lost(t, p, 1)
		if err != nil || n != 3 {
			t.Errorf("ReopenSignIn that landed, retried = %d, %v; want 3", n, err)
		}
		if n, err := st.ReopenSignIn(ctx, "alice", now); err != nil || n != 0 {
			t.Errorf("ReopenSignIn again = %d, %v; want 0", n, err)
		}
	})
}
