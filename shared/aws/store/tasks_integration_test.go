//go:build integration

package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/teamtest"
)

func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestCreateAndGetTask(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	tk := teamtest.RoutedTask("t1", "website-v2", "ana/claude", "bo/codex", base)
	mustCreate(t, f, tk)

	got, err := f.store.Task(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != 1 {
		t.Errorf("version = %d, want 1", got.Version)
	}
	if asJSON(t, got) != asJSON(t, tk) {
		t.Errorf("task round trip:\n got %s\nwant %s", asJSON(t, got), asJSON(t, tk))
	}

	hist, err := f.store.History(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 1 || hist[0].Seq != 1 || hist[0].To != task.Routed || hist[0].From != nil || !hist[0].At.Equal(base) {
		t.Errorf("history = %+v, want one hand_off line, seq 1", hist)
	}

	if err := f.store.CreateTask(ctx, tk, created(tk)); !errors.Is(err, team.ErrConflict) {
		t.Errorf("second create: err = %v, want ErrConflict", err)
	}
	if _, err := f.store.Task(ctx, "nope"); !errors.Is(err, team.ErrNotFound) {
		t.Errorf("missing task: err = %v, want ErrNotFound", err)
	}
	if _, err := f.store.History(ctx, "nope"); !errors.Is(err, team.ErrNotFound) {
		t.Errorf("missing history: err = %v, want ErrNotFound", err)
	}
}

func TestApplyMoveAppendsHistory(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	tk := teamtest.RoutedTask("t1", "website-v2", "ana/claude", "bo/codex", base)
	mustCreate(t, f, tk)

	m, err := task.Accept(tk, "bo/codex", "on it", base.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.store.ApplyMove(ctx, 1, m); err != nil {
		t.Fatal(err)
	}
	got, err := f.store.Task(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != 2 || got.State != task.Accepted || !got.UpdatedAt.Equal(base.Add(time.Minute)) {
		t.Errorf("after accept: version %d state %s updated %s", got.Version, got.State, got.UpdatedAt)
	}
	hist, err := f.store.History(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 2 {
		t.Fatalf("history has %d lines, want 2", len(hist))
	}
	e := hist[1]
	if e.Seq != 2 || e.Action != "accept" || e.By != "bo/codex" || e.From == nil || *e.From != task.Routed || e.To != task.Accepted || e.Note == nil || *e.Note != "on it" {
		t.Errorf("accept line = %+v", e)
	}
}

func TestStaleMoveIsConflictAndWritesNothing(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	tk := teamtest.RoutedTask("t1", "website-v2", "ana/claude", "bo/codex", base)
	mustCreate(t, f, tk)
	accept, _ := task.Accept(tk, "bo/codex", "", base.Add(time.Minute))
	if err := f.store.ApplyMove(ctx, 1, accept); err != nil {
		t.Fatal(err)
	}

	// A decline computed from the version-1 task lost the race to the accept.
	decline, _ := task.Decline(tk, "bo/codex", "no time", base.Add(2*time.Minute))
	if err := f.store.ApplyMove(ctx, 1, decline); !errors.Is(err, team.ErrConflict) {
		t.Fatalf("stale move: err = %v, want ErrConflict", err)
	}
	got, _ := f.store.Task(ctx, "t1")
	if got.Version != 2 || got.State != task.Accepted {
		t.Errorf("after stale move: version %d state %s, want 2 accepted", got.Version, got.State)
	}
	hist, _ := f.store.History(ctx, "t1")
	if len(hist) != 2 {
		t.Errorf("history has %d lines, want 2", len(hist))
	}
	// A move of a task that does not exist lands nowhere either.
	ghost := teamtest.RoutedTask("ghost", "website-v2", "ana/claude", "bo/codex", base)
	gm, _ := task.Accept(ghost, "bo/codex", "", base)
	if err := f.store.ApplyMove(ctx, 1, gm); !errors.Is(err, team.ErrConflict) {
		t.Errorf("move of a missing task: err = %v, want ErrConflict", err)
	}
	if _, err := f.store.History(ctx, "ghost"); !errors.Is(err, team.ErrNotFound) {
		t.Errorf("missing task got history: %v", err)
	}
}

func TestRacingMovesExactlyOneWins(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	tk := teamtest.RoutedTask("t1", "website-v2", "ana/claude", "bo/codex", base)
	mustCreate(t, f, tk)
	accept, _ := task.Accept(tk, "bo/codex", "", base.Add(time.Minute))
	if err := f.store.ApplyMove(ctx, 1, accept); err != nil {
		t.Fatal(err)
	}
	accepted := accept.Task

	const racers = 20
	errs := make([]error, racers)
	var start, done sync.WaitGroup
	start.Add(1)
	for i := range racers {
		done.Add(1)
		go func() {
			defer done.Done()
			cp := task.Checkpoint{Progress: fmt.Sprintf("racer %d", i)}
			m, err := task.SaveCheckpoint(accepted, "bo/codex", cp, "", base.Add(2*time.Minute))
			if err != nil {
				errs[i] = err
				return
			}
			start.Wait()
			errs[i] = f.store.ApplyMove(ctx, 2, m)
		}()
	}
	start.Done()
	done.Wait()

	winner, conflicts := -1, 0
	for i, err := range errs {
		switch {
		case err == nil:
			if winner >= 0 {
				t.Errorf("racers %d and %d both won", winner, i)
			}
			winner = i
		case errors.Is(err, team.ErrConflict):
			conflicts++
		default:
			t.Errorf("racer %d: unexpected error %v", i, err)
		}
	}
	if winner < 0 || conflicts != racers-1 {
		t.Fatalf("winner %d, %d conflicts; want exactly one winner and %d conflicts", winner, conflicts, racers-1)
	}
	got, _ := f.store.Task(ctx, "t1")
	if got.Version != 3 || got.LatestCheckpoint == nil || got.LatestCheckpoint.Progress != fmt.Sprintf("racer %d", winner) {
		t.Errorf("stored task: version %d checkpoint %+v, want version 3 from racer %d", got.Version, got.LatestCheckpoint, winner)
	}
	hist, _ := f.store.History(ctx, "t1")
	if len(hist) != 3 {
		t.Fatalf("history has %d lines, want 3 (one new)", len(hist))
	}
	if hist[2].Action != "checkpoint" || hist[2].Note == nil || *hist[2].Note != fmt.Sprintf("racer %d", winner) {
		t.Errorf("new history line = %+v, want the winner's checkpoint", hist[2])
	}
}

func TestTaskWithHistoryIsTaskAndHistoryInOneRead(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	tk := teamtest.RoutedTask("t1", "website-v2", "ana/claude", "bo/codex", base)
	mustCreate(t, f, tk)
	m, err := task.Accept(tk, "bo/codex", "on it", base.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.store.ApplyMove(ctx, 1, m); err != nil {
		t.Fatal(err)
	}
	got, hist, err := f.store.TaskWithHistory(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	wantTask, err := f.store.Task(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	wantHist, err := f.store.History(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if asJSON(t, got) != asJSON(t, wantTask) || asJSON(t, hist) != asJSON(t, wantHist) {
		t.Errorf("TaskWithHistory = %s %s, want %s %s", asJSON(t, got), asJSON(t, hist), asJSON(t, wantTask), asJSON(t, wantHist))
	}
	if _, _, err := f.store.TaskWithHistory(ctx, "ghost"); !errors.Is(err, team.ErrNotFound) {
		t.Errorf("missing task: err = %v, want ErrNotFound", err)
	}
}
