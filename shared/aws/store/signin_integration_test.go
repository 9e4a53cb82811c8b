//go:build integration

package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func TestSignInMarkerIsSingleUse(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	exp := time.Now().Add(15 * time.Minute)
	first, err := f.store.UseSignIn(ctx, "nonce-1", exp)
	if err != nil || !first {
		t.Fatalf("first use = %v, %v; want true", first, err)
	}
	again, err := f.store.UseSignIn(ctx, "nonce-1", exp)
	if err != nil || again {
		t.Fatalf("second use = %v, %v; want false", again, err)
	}
	other, err := f.store.UseSignIn(ctx, "nonce-2", exp)
	if err != nil || !other {
		t.Fatalf("another link = %v, %v; want true", other, err)
	}
	if _, err := f.store.UseSignIn(ctx, "", exp); err == nil {
		t.Error("an empty nonce was accepted")
	}
}

func TestSignInMarkerRaceHasOneWinner(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			first, err := f.store.UseSignIn(ctx, "raced", time.Now().Add(time.Minute))
			if err != nil {
				t.Error(err)
				return
			}
			if first {
				mu.Lock()
				wins++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if wins != 1 {
		t.Errorf("%d uses won; want exactly 1", wins)
	}
}

func TestSessionsAreRevocable(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	exp := time.Now().Add(12 * time.Hour)
	active := func(owner, id string) bool {
		t.Helper()
		ok, err := f.store.SessionActive(ctx, owner, id)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if active("alice", "laptop") {
		t.Fatal("a session never started is active")
	}
	for _, id := range []string{"laptop", "phone", "tablet"} {
		if err := f.store.StartSession(ctx, "alice", id, exp); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.store.StartSession(ctx, "bob", "laptop", exp); err != nil {
		t.Fatal(err)
	}
	if !active("alice", "laptop") || !active("bob", "laptop") {
		t.Fatal("started sessions are not active")
	}
	// DynamoDB's TTL drops the item when the session expires.
	out, err := f.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(f.tables.Directory), Key: map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "SESSION#alice"}, "sk": &types.AttributeValueMemberS{Value: "laptop"},
	}})
	if err != nil || out.Item == nil {
		t.Fatalf("session item: %v %v", out, err)
	}
	if ttl, ok := out.Item["ttl"].(*types.AttributeValueMemberN); !ok || ttl.Value != itoa(exp.Unix()) {
		t.Errorf("ttl = %#v, want the session's expiry in epoch seconds", out.Item["ttl"])
	}
	if err := f.store.EndSession(ctx, "alice", "laptop"); err != nil {
		t.Fatal(err)
	}
	if active("alice", "laptop") || !active("alice", "phone") || !active("bob", "laptop") {
		t.Error("ending alice's laptop session ended the wrong ones")
	}
	if err := f.store.EndSession(ctx, "alice", "laptop"); err != nil {
		t.Errorf("ending an ended session: %v", err)
	}
	if err := f.store.EndOwnerSessions(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	if active("alice", "phone") || active("alice", "tablet") {
		t.Error("alice still has sessions after ending all of them")
	}
	if !active("bob", "laptop") {
		t.Error("ending alice's sessions ended bob's")
	}
	if err := f.store.EndOwnerSessions(ctx, "alice"); err != nil {
		t.Errorf("ending no sessions: %v", err)
	}
	if err := f.store.StartSession(ctx, "alice", "", exp); err == nil {
		t.Error("a session without an id was recorded")
	}
}
