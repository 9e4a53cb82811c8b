//go:build integration

package store_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestFirstSlackRequestOnce(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	now := time.Now()
	const id = "1733050000:v0=0123abcd"

	// Racing deliveries of one signed request: exactly one is first.
	var firsts atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			ok, err := f.store.FirstSlackRequest(ctx, id, now)
			if err != nil {
				t.Error(err)
			}
			if ok {
				firsts.Add(1)
			}
		})
	}
	wg.Wait()
	if n := firsts.Load(); n != 1 {
		t.Errorf("%d requests were first, want 1", n)
	}
	if ok, err := f.store.FirstSlackRequest(ctx, "1733050000:v0=ffff", now); err != nil || !ok {
		t.Errorf("another signature at the same second: first = %v, %v; want true", ok, err)
	}
	if _, err := f.store.FirstSlackRequest(ctx, "", now); err == nil {
		t.Error("an empty id was accepted")
	}
}
