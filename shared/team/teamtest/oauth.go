package teamtest

import (
	"cmp"
	"context"
	"slices"

	"github.com/useprickle/prickle/shared/auth/oauthgrant"
	"github.com/useprickle/prickle/shared/team"
)

// PutOAuthGrant records a connected client (an OAuth grant); a grant stored
// already is team.ErrConflict, as in the real store.
func (s *Store) PutOAuthGrant(_ context.Context, g oauthgrant.Grant) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.connected[g.ID]; ok {
		return team.ErrConflict
	}
	s.connected[g.ID] = g
	return nil
}

// OwnerOAuthGrants lists an owner's grants, revoked ones included, newest first.
func (s *Store) OwnerOAuthGrants(_ context.Context, owner string) ([]oauthgrant.Grant, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []oauthgrant.Grant
	for _, g := range s.connected {
		if g.Owner == owner {
			out = append(out, g)
		}
	}
	slices.SortFunc(out, func(a, b oauthgrant.Grant) int {
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

// RevokeOAuthGrant marks a grant revoked; an unknown one is oauthgrant.ErrNotFound.
func (s *Store) RevokeOAuthGrant(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.connected[id]
	if !ok {
		return oauthgrant.ErrNotFound
	}
	g.Revoked = true
	s.connected[id] = g
	return nil
}
