package team

import (
	"context"
	"slices"
)

// ProjectReader is what the owner-visibility rule reads: a project and its
// agents (the web's room store has both).
type ProjectReader interface {
	Project(ctx context.Context, slug string) (Project, error)
	ListAgents(ctx context.Context, project string) ([]Agent, error)
}

// OwnerProject loads a project the owner may see, with its agents: one an
// agent of the owner belongs to. Any other project, existing or not, is
// ErrNotFound, so an owner's pages never tell which other projects exist.
func OwnerProject(ctx context.Context, r ProjectReader, owner, slug string) (Project, []Agent, error) {
	agents, err := r.ListAgents(ctx, slug)
	if err != nil {
		return Project{}, nil, err
	}
	if !slices.ContainsFunc(agents, func(a Agent) bool { return a.Owner == owner }) {
		return Project{}, nil, ErrNotFound
	}
	p, err := r.Project(ctx, slug)
	return p, agents, err
}
