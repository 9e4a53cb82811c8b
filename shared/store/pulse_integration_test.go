//go:build integration

package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/pulse"
)

func TestPulseKeepsLatestEntryPerAgent(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	taskID, branch := "t1", "feat/pricing"
	entries := []pulse.Entry{
		{AgentID: "bo/codex", Owner: "bo", Project: "website-v2", Availability: "working", Doing: "pricing page",
			TaskID: &taskID, Branch: &branch, Files: []string{"web/pricing.go"}, UpdatedAt: base},
		{AgentID: "ana/claude", Owner: "ana", Project: "website-v2", Availability: "idle", Doing: "",
			Files: []string{}, UpdatedAt: base},
		{AgentID: "bo/codex", Owner: "bo", Project: "website-v2", Availability: "idle", Doing: "waiting for review",
			Files: []string{}, UpdatedAt: base.Add(time.Minute)},
		{AgentID: "bo/codex", Owner: "bo", Project: "billing", Availability: "away", Doing: "elsewhere",
			Files: []string{}, UpdatedAt: base},
	}
	for _, e := range entries {
		if err := f.store.PutPulse(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	got, err := f.store.Pulse(ctx, "website-v2")
	if err != nil {
		t.Fatal(err)
	}
	want := []pulse.Entry{entries[1], entries[2]} // by agent id; bo's latest report replaced the first
	if asJSON(t, got) != asJSON(t, want) {
		t.Errorf("pulse\n got %s\nwant %s", asJSON(t, got), asJSON(t, want))
	}
	empty, err := f.store.Pulse(ctx, "nobody-here")
	if err != nil || len(empty) != 0 {
		t.Errorf("empty project: %v, %v", empty, err)
	}
}
