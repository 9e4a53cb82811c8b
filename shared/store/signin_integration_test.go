//go:build integration

package store_test

import (
	"context"
	"sync"
	"testing"
	"time"
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
