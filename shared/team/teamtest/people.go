package teamtest

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/useprickle/prickle/shared/auth/oauthstate"
	"github.com/useprickle/prickle/shared/auth/session"
	"github.com/useprickle/prickle/shared/team"
)

// people is what the signed-in pages read beyond team.Store: owners, the
// agents of a project, sign-in links used, sign-in requests counted, the
// sessions recorded and the clients owners connected. Its maps are guarded
// by Store.mu.
type people struct {
	owners    map[string]team.Owner
	used      map[string]bool                    // sign-in nonce → used
	asked     map[string]int                     // sign-in bound key → requests counted
	live      map[string]map[string]bool         // owner → session id → recorded
	connected map[string]oauthstate.Connection   // OAuth grant id → grant
	joined    map[string]oauthstate.JoinedRunner // runner id → runner joined by the device grant
}

func newPeople() people {
	return people{owners: map[string]team.Owner{}, used: map[string]bool{}, asked: map[string]int{}, live: map[string]map[string]bool{},
		connected: map[string]oauthstate.Connection{}, joined: map[string]oauthstate.JoinedRunner{}}
}

// AddOwner seeds an owner, replacing any with the same name.
func (s *Store) AddOwner(o team.Owner) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.owners[o.Name] = o
}

// Owner returns a seeded owner, or team.ErrNotFound.
func (s *Store) Owner(_ context.Context, name string) (team.Owner, error) {
	return stored(s, func() map[string]team.Owner { return s.owners }, name, func(o team.Owner) team.Owner { return o }, "owner "+name)
}

// ListAgents returns the agents of a project, by id.
func (s *Store) ListAgents(_ context.Context, project string) ([]team.Agent, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []team.Agent
	for _, a := range s.agents {
		if slices.Contains(a.Projects, project) {
			a.Projects = slices.Clone(a.Projects)
			out = append(out, a)
		}
	}
	slices.SortFunc(out, func(a, b team.Agent) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// OwnerProjects lists the projects the owner's agents belong to, sorted.
func (s *Store) OwnerProjects(_ context.Context, owner string) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []string{}
	for _, a := range s.agents {
		if a.Owner == owner {
			out = append(out, a.Projects...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// AllowSignInRequest counts a sign-in request against the per-client, per
// name per client and per name bounds, in that order, as the real store does
// (without its 15-minute window: a test's requests all fall in one).
func (s *Store) AllowSignInRequest(_ context.Context, owner, client string, _ time.Time) (session.SignInLimit, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range []struct {
		key   string
		max   int
		limit session.SignInLimit
	}{
		{"client " + client, session.RequestsPerClient, session.ClientLimit},
		{"pair " + owner + " " + client, session.LinksPerNamePerClient, session.NameFromClientLimit},
		{"name " + owner, session.LinksPerName, session.NameLimit},
	} {
		if s.asked[c.key] >= c.max {
			return c.limit, nil
		}
		s.asked[c.key]++
	}
	return session.WithinLimits, nil
}

// UseSignIn implements session.Markers: first is false once nonce was used.
func (s *Store) UseSignIn(_ context.Context, nonce string, _ time.Time) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.used[nonce] {
		return false, nil
	}
	s.used[nonce] = true
	return true, nil
}

// StartSession implements session.Sessions (sessions do not expire here).
func (s *Store) StartSession(_ context.Context, owner, id string, _ time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.live[owner] == nil {
		s.live[owner] = map[string]bool{}
	}
	s.live[owner][id] = true
	return nil
}

// SessionActive implements session.Sessions.
func (s *Store) SessionActive(_ context.Context, owner, id string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.live[owner][id], nil
}

// EndSession implements session.Sessions.
func (s *Store) EndSession(_ context.Context, owner, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.live[owner], id)
	return nil
}

// EndOwnerSessions implements session.Sessions.
func (s *Store) EndOwnerSessions(_ context.Context, owner string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.live, owner)
	return nil
}
