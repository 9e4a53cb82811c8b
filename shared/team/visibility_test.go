package team_test

import (
	"context"
	"errors"
	"testing"

	"github.com/useprickle/prickle/shared/team"
)

// directory is a project reader in memory: projects by slug, agents by project.
type directory struct {
	projects map[string]team.Project
	agents   map[string][]team.Agent
	err      error
}

func (d directory) Project(_ context.Context, slug string) (team.Project, error) {
	p, ok := d.projects[slug]
	if !ok {
		return team.Project{}, team.ErrNotFound
	}
	return p, nil
}

func (d directory) ListAgents(_ context.Context, project string) ([]team.Agent, error) {
	return d.agents[project], d.err
}

// TestOwnerProject: an owner sees a project one of their agents belongs
// to; any other, existing or not, is not found; a failed read is the error.
func TestOwnerProject(t *testing.T) {
	d := directory{
		projects: map[string]team.Project{"website-v2": {Slug: "website-v2", Name: "Website v2"}, "secret": {Slug: "secret"}},
		agents: map[string][]team.Agent{
			"website-v2": {{ID: "alice/writer", Owner: "alice"}, {ID: "bob/reviewer", Owner: "bob"}},
			"secret":     {{ID: "carol/spy", Owner: "carol"}},
		},
	}
	down := errors.New("directory unavailable")
	tests := []struct {
		name, owner, slug string
		dir               directory
		agents            int
		err               error
	}{
		{"an agent of the owner is in it", "alice", "website-v2", d, 2, nil},
		{"another owner's agent is in it", "bob", "website-v2", d, 2, nil},
		{"no agent of the owner is in it", "alice", "secret", d, 0, team.ErrNotFound},
		{"it does not exist", "alice", "nowhere", d, 0, team.ErrNotFound},
		{"an owner with no agents", "dave", "website-v2", d, 0, team.ErrNotFound},
		{"the directory fails", "alice", "website-v2", directory{err: down}, 0, down},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, agents, err := team.OwnerProject(context.Background(), tt.dir, tt.owner, tt.slug)
			if !errors.Is(err, tt.err) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			if len(agents) != tt.agents {
				t.Errorf("%d agents, want %d", len(agents), tt.agents)
			}
			if tt.err == nil && p.Slug != tt.slug {
				t.Errorf("project %q, want %q", p.Slug, tt.slug)
			}
			if tt.err != nil && p.Slug != "" {
				t.Errorf("project %q returned with %v", p.Slug, err)
			}
		})
	}
}
