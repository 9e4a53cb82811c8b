package teamtest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/useprickle/prickle/shared/domain/grant"
	"github.com/useprickle/prickle/shared/team"
)

// ProjectGrants implements team.Grants: the project's grants in id order.
func (s *Store) ProjectGrants(_ context.Context, project string) ([]grant.Grant, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []grant.Grant{}
	for _, g := range s.grants {
		if g.Project == project {
			out = append(out, g)
		}
	}
	slices.SortFunc(out, func(a, b grant.Grant) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// PutGrant implements team.Grants: a new grant only.
func (s *Store) PutGrant(_ context.Context, g grant.Grant) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.grants[g.ID]; ok {
		return fmt.Errorf("put grant %s: %w", g.ID, team.ErrConflict)
	}
	s.grants[g.ID] = g
	return nil
}

// UseGrant implements team.Grants: one use while the grant is live.
func (s *Store) UseGrant(_ context.Context, project, id string, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.grants[id]
	if !ok || g.Project != project {
		return fmt.Errorf("use grant %s: %w", id, team.ErrNotFound)
	}
	if !g.Live(now) {
		return fmt.Errorf("use grant %s: %w", id, team.ErrConflict)
	}
	g.Uses++
	s.grants[id] = g
	return nil
}

// RevokeGrant implements team.Grants: once.
func (s *Store) RevokeGrant(_ context.Context, project, id, by string, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.grants[id]
	if !ok || g.Project != project {
		return fmt.Errorf("revoke grant %s: %w", id, team.ErrNotFound)
	}
	if g.RevokedAt != nil {
		return fmt.Errorf("revoke grant %s: %w", id, team.ErrConflict)
	}
	g.RevokedAt, g.RevokedBy = &now, by
	s.grants[id] = g
	return nil
}
