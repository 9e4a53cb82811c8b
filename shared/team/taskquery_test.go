package team_test

import (
	"testing"

	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/team"
)

func TestPageLimit(t *testing.T) {
	for _, tt := range []struct{ limit, want int }{{-1, team.DefaultTaskLimit}, {0, team.DefaultTaskLimit}, {1, 1}, {team.DefaultTaskLimit, team.DefaultTaskLimit},
		{team.MaxTaskLimit, team.MaxTaskLimit}, {team.MaxTaskLimit + 1, team.MaxTaskLimit}, {1000, team.MaxTaskLimit}} {
		if got := (team.TaskQuery{Limit: tt.limit}).PageLimit(); got != tt.want {
			t.Errorf("PageLimit of limit %d = %d, want %d", tt.limit, got, tt.want)
		}
	}
}

// TestDigest: a query's digest ignores its limit, its cursor and the order
// of its states, reads no role as any, and differs for another selection.
func TestDigest(t *testing.T) {
	base := team.TaskQuery{Project: "website-v2", Involving: "bob/reviewer", Role: "any", States: []task.State{task.Working, task.Accepted}}
	tests := []struct {
		name string
		q    team.TaskQuery
		same bool
	}{
		{"another limit and cursor", team.TaskQuery{Project: "website-v2", Involving: "bob/reviewer", Role: "any", States: []task.State{task.Working, task.Accepted}, Limit: 5, Cursor: "abc"}, true},
		{"states in another order", team.TaskQuery{Project: "website-v2", Involving: "bob/reviewer", Role: "any", States: []task.State{task.Accepted, task.Working}}, true},
		{"no role", team.TaskQuery{Project: "website-v2", Involving: "bob/reviewer", States: []task.State{task.Working, task.Accepted}}, true},
		{"another project", team.TaskQuery{Project: "other", Involving: "bob/reviewer", Role: "any", States: []task.State{task.Working, task.Accepted}}, false},
		{"another agent", team.TaskQuery{Project: "website-v2", Involving: "alice/writer", Role: "any", States: []task.State{task.Working, task.Accepted}}, false},
		{"another role", team.TaskQuery{Project: "website-v2", Involving: "bob/reviewer", Role: "assignee", States: []task.State{task.Working, task.Accepted}}, false},
		{"fewer states", team.TaskQuery{Project: "website-v2", Involving: "bob/reviewer", Role: "any", States: []task.State{task.Working}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.q.Digest() == base.Digest(); got != tt.same {
				t.Errorf("same digest = %v, want %v", got, tt.same)
			}
		})
	}
}
