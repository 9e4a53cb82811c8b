package team_test

import (
	"errors"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/team"
)

// TestClaimSettings: a member (agent or run token) reads its project's file
// guard and Team Pulse window, defaults filled in; an outsider and a
// missing project get the same refusal.
func TestClaimSettings(t *testing.T) {
	f := newFixture(t)
	f.store.AddProject(team.Project{Slug: "mobile", Name: "Mobile", PulseStaleAfter: 10 * time.Minute, FileGuard: "warn"})
	tests := []struct {
		name    string
		caller  identity.Caller
		project string
		want    team.ClaimSettings
		refused string
	}{
		{"a run token, the defaults", run(alice, "tsk_1", "run_1", ""), "website-v2",
			team.ClaimSettings{Agent: alice.Agent, Project: "website-v2", FileGuard: "deny", PulseStaleSeconds: 1800}, ""},
		{"the project's own settings", bob, "mobile", team.ClaimSettings{Agent: bob.Agent, Project: "mobile", FileGuard: "warn", PulseStaleSeconds: 600}, ""},
		{"an outsider", run(alice, "tsk_1", "run_1", ""), "mobile", team.ClaimSettings{}, "no project mobile that alice/writer belongs to"},
		{"no such project", alice, "nowhere", team.ClaimSettings{}, "no project nowhere that alice/writer belongs to"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := f.svc.ClaimSettings(ctx, tt.caller, tt.project)
			if tt.refused != "" {
				var r *task.Refusal
				if !errors.As(err, &r) || r.Msg != tt.refused {
					t.Fatalf("err = %v, want the refusal %q", err, tt.refused)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("ClaimSettings = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}
