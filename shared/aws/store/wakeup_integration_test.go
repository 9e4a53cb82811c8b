//go:build integration

package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/useprickle/prickle/shared/aws/store/storetest"
	"github.com/useprickle/prickle/shared/domain/wakeup"
	"github.com/useprickle/prickle/shared/team"
)

// TestPendingWakeups: a redelivered event neither duplicates a wake-up nor
// makes a claimed one claimable again; claims are exclusive until their
// visibility ends; ack takes only the latest claim, once for good.
func TestPendingWakeups(t *testing.T) {
	fx := newFixture(t)
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	p := wakeup.Pending{ID: wakeup.PendingID("Task Routed:tsk_1:1", "alice/writer", now), Agent: "alice/writer", TaskID: "tsk_1",
		Reason: wakeup.ReasonTaskRouted, EventID: "Task Routed:tsk_1:1", CreatedAt: now}
	older := p
	older.ID, older.EventID, older.CreatedAt = wakeup.PendingID("e0", "alice/writer", now.Add(-time.Minute)), "e0", now.Add(-time.Minute)
	for _, w := range []wakeup.Pending{p, p, older} {
		if err := fx.store.PutPendingWakeup(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	got, err := fx.store.ClaimableWakeups(ctx, "alice/writer", now, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != older.ID || got[1] != p {
		t.Fatalf("claimable = %+v, want the older one, then %+v", got, p)
	}
	if one, _ := fx.store.ClaimableWakeups(ctx, "alice/writer", now, 1); len(one) != 1 {
		t.Errorf("limit 1 gave %d", len(one))
	}
	if other, _ := fx.store.ClaimableWakeups(ctx, "bob/reviewer", now, 10); len(other) != 0 {
		t.Errorf("bob sees alice's wake-ups: %+v", other)
	}

	until := now.Add(wakeup.DefaultVisibility)
	first, second := wakeup.ClaimHash("wkc_first"), wakeup.ClaimHash("wkc_second")
	if won, _, err := fx.store.ClaimWakeup(ctx, "alice/writer", p.ID, first, now, until); err != nil || !won {
		t.Fatalf("first claim: %v %v", won, err)
	}
	if won, _, err := fx.store.ClaimWakeup(ctx, "alice/writer", p.ID, second, now, until); err != nil || won {
		t.Fatalf("a second claim while invisible won: %v %v", won, err)
	}
	if err := fx.store.PutPendingWakeup(ctx, p); err != nil { // the event redelivered
		t.Fatal(err)
	}
	left, _ := fx.store.ClaimableWakeups(ctx, "alice/writer", now.Add(time.Second), 10)
	if len(left) != 1 || left[0].ID != older.ID {
		t.Fatalf("after a claim and a redelivery, claimable = %+v; want only the older one", left)
	}
	if won, _, err := fx.store.ClaimWakeup(ctx, "alice/writer", "wk_0000000000000_0000000000000000", second, now, until); err != nil || won {
		t.Errorf("claimed a wake-up that does not exist: %v %v", won, err)
	}

	// Past its visibility it is claimable again; the new claim supersedes the first.
	if won, _, err := fx.store.ClaimWakeup(ctx, "alice/writer", p.ID, second, until, until.Add(wakeup.DefaultVisibility)); err != nil || !won {
		t.Fatalf("re-claim after the visibility timeout: %v %v", won, err)
	}
	if err := fx.store.AckWakeup(ctx, "alice/writer", p.ID, first, until); !errors.Is(err, wakeup.ErrStaleClaim) {
		t.Errorf("ack with the superseded claim = %v, want ErrStaleClaim", err)
	}
	if err := fx.store.AckWakeup(ctx, "bob/reviewer", p.ID, second, until); !errors.Is(err, team.ErrNotFound) {
		t.Errorf("bob's ack of alice's wake-up = %v, want ErrNotFound", err)
	}
	for range 2 {
		if err := fx.store.AckWakeup(ctx, "alice/writer", p.ID, second, until); err != nil {
			t.Fatalf("ack with the latest claim: %v", err)
		}
	}
	if won, _, err := fx.store.ClaimWakeup(ctx, "alice/writer", p.ID, first, until.Add(time.Hour), until.Add(2*time.Hour)); err != nil || won {
		t.Errorf("claimed an acknowledged wake-up: %v %v", won, err)
	}
	// A day after it was stored it is no longer claimable, TTL or not.
	if late, _ := fx.store.ClaimableWakeups(ctx, "alice/writer", now.Add(wakeup.PendingRetention), 10); len(late) != 0 {
		t.Errorf("claimable after its retention: %+v", late)
	}
}

// A claim of a wake-up whose answer was lost and which the SDK retried is
// still won by that claim (its own hash), not lost to itself until the
// visibility ends; another claim still loses.
func TestRetriedWakeupClaimThatLandedIsStillWon(t *testing.T) {
	fx := storetest.New(t)
	p := storetest.NewProxy(t)
	st := p.Store(fx, func(o *dynamodb.Options) {
		o.HTTPClient = awshttp.NewBuildableClient().WithTimeout(time.Second)
	})
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	w := wakeup.Pending{ID: wakeup.PendingID("Task Routed:tsk_lost:1", "alice/writer", now), Agent: "alice/writer", TaskID: "tsk_lost",
		Reason: wakeup.ReasonTaskRouted, EventID: "Task Routed:tsk_lost:1", CreatedAt: now}
	if err := st.PutPendingWakeup(ctx, w); err != nil {
		t.Fatal(err)
	}
	until := now.Add(wakeup.DefaultVisibility)
	p.Inject(storetest.Rule{Fault: storetest.LostAnswer, Op: "UpdateItem", Times: 1})
	if won, _, err := st.ClaimWakeup(ctx, "alice/writer", w.ID, wakeup.ClaimHash("wkc_lost"), now, until); err != nil || !won {
		t.Fatalf("a claim that landed, retried = %v, %v; want won", won, err)
	}
	if got := p.Injected()[storetest.LostAnswer]; got != 1 {
		t.Fatalf("the proxy lost %d answers, want 1", got)
	}
	if won, _, err := st.ClaimWakeup(ctx, "alice/writer", w.ID, wakeup.ClaimHash("wkc_other"), now, until); err != nil || won {
		t.Errorf("another claim while it is invisible = %v, %v; want lost", won, err)
	}
}
