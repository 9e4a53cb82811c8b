//go:build integration

package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/domain/wakeup"
	"github.com/useprickle/prickle/shared/team"
)

func seedAgent(t *testing.T, f fixture, id string) {
	t.Helper()
	ctx := context.Background()
	if err := f.store.PutProject(ctx, team.Project{Slug: "website-v2", Name: "Website"}); err != nil {
		t.Fatal(err)
	}
	owner := id[:len(id)-len("/codex")]
	if err := f.store.PutOwner(ctx, team.Owner{Name: owner}); err != nil {
		t.Fatal(err)
	}
	if err := f.store.PutAgent(ctx, team.Agent{ID: id, Projects: []string{"website-v2"}}); err != nil {
		t.Fatal(err)
	}
}

func TestWakeHookRoundTripAndRefusals(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	seedAgent(t, f, "bo/codex")

	if _, err := f.store.WakeHook(ctx, "bo/codex"); !errors.Is(err, team.ErrNotFound) {
		t.Fatalf("hook before registration: err = %v, want ErrNotFound", err)
	}
	h := wakeup.Hook{Agent: "bo/codex", URL: "https://agents.example.com/wake", Secret: "whsec_0123456789abcdef", UpdatedAt: base}
	if err := f.store.PutWakeHook(ctx, h); err != nil {
		t.Fatal(err)
	}
	got, err := f.store.WakeHook(ctx, "bo/codex")
	if err != nil || got != h {
		t.Fatalf("hook = %+v, %v; want %+v", got, err, h)
	}
	h.URL = "https://agents.example.com/wake2"
	if err := f.store.PutWakeHook(ctx, h); err != nil {
		t.Fatal(err)
	}
	if got, _ := f.store.WakeHook(ctx, "bo/codex"); got.URL != h.URL {
		t.Errorf("replaced hook URL = %s", got.URL)
	}
	// The agent item is untouched by its hook.
	if a, err := f.store.Agent(ctx, "bo/codex"); err != nil || a.ID != "bo/codex" {
		t.Errorf("agent after hook = %+v, %v", a, err)
	}

	if err := f.store.PutWakeHook(ctx, wakeup.Hook{Agent: "zed/ghost", URL: "https://x.example", Secret: "whsec_0123456789abcdef"}); !errors.Is(err, team.ErrNotFound) {
		t.Errorf("hook of an unknown agent: err = %v, want ErrNotFound", err)
	}
	if err := f.store.PutWakeHook(ctx, wakeup.Hook{Agent: "bo/codex", URL: "ftp://x", Secret: "whsec_0123456789abcdef"}); err == nil {
		t.Error("a non-http URL was accepted")
	}
	if err := f.store.PutWakeHook(ctx, wakeup.Hook{Agent: "bo/codex", URL: "https://x.example", Secret: "short"}); err == nil {
		t.Error("a short secret was accepted")
	}
}

func TestWakeAttemptsInOrder(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if got, err := f.store.WakeAttempts(ctx, "t1"); err != nil || len(got) != 0 {
		t.Fatalf("attempts of a task never woken = %v, %v", got, err)
	}
	want := []wakeup.Attempt{
		{EventID: "e1", RunID: "run_a", Agent: "bo/codex", TaskID: "t1", Reason: "task_routed", Attempt: 1, At: base, Error: "connection refused"},
		{EventID: "e1", RunID: "run_a", Agent: "bo/codex", TaskID: "t1", Reason: "task_routed", Attempt: 2, At: base.Add(500 * time.Millisecond), StatusCode: 503},
		{EventID: "e1", RunID: "run_a", Agent: "bo/codex", TaskID: "t1", Reason: "task_routed", Attempt: 3, At: base.Add(1500 * time.Millisecond), StatusCode: 204},
	}
	for _, i := range []int{2, 0, 1} {
		if err := f.store.RecordWakeAttempt(ctx, want[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.store.RecordWakeAttempt(ctx, wakeup.Attempt{RunID: "run_b", TaskID: "t2", Attempt: 1, At: base}); err != nil {
		t.Fatal(err)
	}
	got, err := f.store.WakeAttempts(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("got %d attempts, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("attempt %d = %+v\nwant %+v", i, got[i], want[i])
		}
	}
	if !got[2].Delivered() || got[1].Delivered() {
		t.Error("Delivered should hold for the 2xx attempt only")
	}
}
