package runner

import (
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/domain/pulse"
)

func TestHolderOf(t *testing.T) {
	now := time.Date(2026, 12, 3, 14, 30, 0, 0, time.UTC)
	entry := func(agent string, ago time.Duration, files ...string) pulse.Entry {
		return pulse.Entry{AgentID: agent, TaskID: str("tsk_" + agent[:3]), Files: files, UpdatedAt: now.Add(-ago)}
	}
	tests := []struct {
		name    string
		entries []pulse.Entry
		want    string // the holder, "" for none
	}{
		{"nobody", nil, ""},
		{"a teammate", []pulse.Entry{entry("bob/coder", time.Minute, "src/app.ts")}, "bob/coder"},
		{"myself", []pulse.Entry{entry("alice/writer", time.Minute, "src/app.ts")}, ""},
		{"just within the window", []pulse.Entry{entry("bob/coder", 30*time.Minute, "src/app.ts")}, "bob/coder"},
		{"stale", []pulse.Entry{entry("bob/coder", 30*time.Minute+time.Second, "src/app.ts")}, ""},
		{"another file", []pulse.Entry{entry("bob/coder", time.Minute, "src/other.ts")}, ""},
		{"the newest of two", []pulse.Entry{entry("bob/coder", 9*time.Minute, "src/*"), entry("dan/fixer", 2*time.Minute, "src/app.ts"),
			entry("eve/old", 5*time.Minute, "src/app.ts")}, "dan/fixer"},
	}
	for _, tt := range tests {
		h := holderOf(tt.entries, "alice/writer", "", "src/app.ts", now, 30*time.Minute)
		got := ""
		if h != nil {
			got = h.Agent
		}
		if got != tt.want {
			t.Errorf("%s: holder %q, want %q", tt.name, got, tt.want)
		}
	}
	h := holderOf([]pulse.Entry{entry("bob/coder", 28*time.Minute, "src/app.ts")}, "alice/writer", "", "src/app.ts", now, 30*time.Minute)
	if want := "bob/coder holds src/app.ts for task tsk_bob since 14:02 UTC; it is released when bob/coder's Team Pulse lets it go, or at 14:32 UTC if not renewed"; h.says("src/app.ts", now) != want {
		t.Errorf("says %q, want %q", h.says("src/app.ts", now), want)
	}
	if got := clock(now.Add(-24*time.Hour), now); got != "Dec 2 14:30 UTC" {
		t.Errorf("another day: %q", got)
	}
	h.TaskID = ""
	if got := h.asked("src/app.ts", now); len(got) > 500 || got[:len("bob/coder holds src/app.ts for no task")] != "bob/coder holds src/app.ts for no task" {
		t.Errorf("asked %q", got)
	}
}
