//go:build integration

package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/domain/pulse"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/teamtest"
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

// TestPutTaskPulseChecksTheTaskProject: an entry naming a task is stored
// only when the task is in the entry's project; otherwise nothing is written.
func TestPutTaskPulseChecksTheTaskProject(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	mustCreate(t, f, teamtest.RoutedTask("hero", "website-v2", "bo/codex", "ana/claude", base))
	mustCreate(t, f, teamtest.RoutedTask("smoke", "mobile", "bo/codex", "ana/claude", base))
	entry := func(taskID, doing string) pulse.Entry {
		return pulse.Entry{AgentID: "ana/claude", Owner: "ana", Project: "website-v2", Availability: "working",
			Doing: doing, TaskID: &taskID, Files: []string{}, UpdatedAt: base}
	}
	cases := []struct {
		name, task string
		stored     bool
	}{
		{"a task of the project", "hero", true},
		{"a task of another project", "smoke", false},
		{"no such task", "nope", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := entry(c.task, "on "+c.name)
			err := f.store.PutTaskPulse(ctx, e)
			got, rerr := f.store.Pulse(ctx, "website-v2")
			if rerr != nil {
				t.Fatal(rerr)
			}
			stored := len(got) == 1 && got[0].Doing == e.Doing
			if c.stored && (err != nil || !stored) {
				t.Errorf("err %v, pulse %s", err, asJSON(t, got))
			}
			if !c.stored && (!errors.Is(err, team.ErrConflict) || stored) {
				t.Errorf("err %v (want ErrConflict), pulse %s", err, asJSON(t, got))
			}
		})
	}
}
