package teamtest

import (
	"cmp"
	"context"
	"slices"

	"github.com/useprickle/prickle/shared/auth/oauthstate"
	"github.com/useprickle/prickle/shared/team"
)

// PutOAuthConnection records a connected client (an OAuth grant); a grant stored
// already is team.ErrConflict, as in the real store.
func (s *Store) PutOAuthConnection(_ context.Context, g oauthstate.Connection) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.connected[g.ID]; ok {
		return team.ErrConflict
	}
	s.connected[g.ID] = g
	return nil
}

// OwnerOAuthConnections lists an owner's grants, revoked ones included, newest first.
func (s *Store) OwnerOAuthConnections(_ context.Context, owner string) ([]oauthstate.Connection, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []oauthstate.Connection
	for _, g := range s.connected {
		if g.Owner == owner {
			out = append(out, g)
		}
	}
	slices.SortFunc(out, func(a, b oauthstate.Connection) int {
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

// RevokeOAuthConnection marks a grant revoked; an unknown one is oauthstate.ErrNotFound.
func (s *Store) RevokeOAuthConnection(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.connected[id]
	if !ok {
		return oauthstate.ErrNotFound
	}
	g.Revoked = true
	s.connected[id] = g
	return nil
}

// PutJoinedRunner records a runner joined by the device grant; an id stored already is team.ErrConflict.
func (s *Store) PutJoinedRunner(_ context.Context, r oauthstate.JoinedRunner) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.joined[r.ID]; ok {
		return team.ErrConflict
	}
	s.joined[r.ID] = r
	return nil
}

// OwnerJoinedRunners lists an owner's joined runners, revoked ones included, newest first.
func (s *Store) OwnerJoinedRunners(_ context.Context, owner string) ([]oauthstate.JoinedRunner, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []oauthstate.JoinedRunner
	for _, r := range s.joined {
		if r.Owner == owner {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b oauthstate.JoinedRunner) int {
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

// RevokeJoinedRunner marks the owner's runner revoked; another owner's, or an
// unknown one, is oauthstate.ErrNotFound. (The in-memory store keeps no tokens.)
func (s *Store) RevokeJoinedRunner(_ context.Context, owner, id string) (oauthstate.JoinedRunner, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.joined[id]
	if !ok || r.Owner != owner {
		return oauthstate.JoinedRunner{}, oauthstate.ErrNotFound
	}
	r.Revoked = true
	s.joined[id] = r
	return r, nil
}
