//go:build integration

package store_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/useprickle/prickle/shared/aws/store"
)

func TestDedupClaimFinishRelease(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	const target, id = "WakeupFunction", "Step Decided:t1:s1:approved"
	now := base
	lease := now.Add(16 * time.Minute)

	claim := func(holder string, at time.Time) (bool, bool) {
		t.Helper()
		ok, done, err := f.store.Claim(ctx, target, id, holder, at, at.Add(16*time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		return ok, done
	}
	if ok, _ := claim("h1", now); !ok {
		t.Fatal("first claim refused")
	}
	if ok, done := claim("h2", now.Add(time.Minute)); ok || done {
		t.Fatalf("second claim within the lease = (%v, %v), want (false, false): in progress", ok, done)
	}
	if ok, _, err := f.store.Claim(ctx, "NotifyFunction", id, "h3", now, lease); err != nil || !ok {
		t.Fatalf("another target's claim of the same event = %v, %v; want it taken", ok, err)
	}
	// Release gives the event back: the next delivery claims it.
	if err := f.store.Release(ctx, target, id, "h2"); err == nil {
		t.Error("a holder released a claim it does not hold")
	}
	if err := f.store.Release(ctx, target, id, "h1"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := claim("h4", now.Add(2*time.Minute)); !ok {
		t.Fatal("claim after release refused")
	}
	if err := f.store.Finish(ctx, target, id, "h1"); err == nil {
		t.Error("a former holder finished a claim taken over by another")
	}
	if err := f.store.Finish(ctx, target, id, "h4"); err != nil {
		t.Fatal(err)
	}
	if ok, done := claim("h5", now.Add(48*time.Hour)); ok || !done {
		t.Fatalf("claim of a finished event = (%v, %v), want (false, true) even after its lease", ok, done)
	}
	if err := f.store.Release(ctx, target, id, "h4"); err == nil {
		t.Error("a finished event was released")
	}

	out, err := f.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(f.tables.Directory), Key: map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "DEDUP#" + target + "#" + id}, "sk": &types.AttributeValueMemberS{Value: "DEDUP"},
	}})
	if err != nil || out.Item == nil {
		t.Fatalf("dedup item: %v %v", out, err)
	}
	ttl, ok := out.Item["ttl"].(*types.AttributeValueMemberN)
	if !ok || ttl.Value != itoa(now.Add(2*time.Minute).Add(store.DedupRetention).Unix()) {
		t.Errorf("ttl = %#v, want the claim time + 7 days in epoch seconds", out.Item["ttl"])
	}
}

func TestDedupLapsedClaimIsTakenOver(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if ok, _, err := f.store.Claim(ctx, "RouteFunction", "e1", "crashed", base, base.Add(time.Minute)); err != nil || !ok {
		t.Fatal(ok, err)
	}
	ok, done, err := f.store.Claim(ctx, "RouteFunction", "e1", "next", base.Add(time.Minute), base.Add(2*time.Minute))
	if err != nil || !ok || done {
		t.Fatalf("claim at the lease's end = (%v, %v, %v), want taken over", ok, done, err)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
