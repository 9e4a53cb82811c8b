package teamtest

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/useprickle/prickle/shared/domain/pulse"
	"github.com/useprickle/prickle/shared/team"
)

// PutPulse implements team.Pulses: one entry per agent and project, the latest wins.
func (s *Store) PutPulse(_ context.Context, e pulse.Entry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pulses[e.Project] == nil {
		s.pulses[e.Project] = map[string]pulse.Entry{}
	}
	s.pulses[e.Project][e.AgentID] = copyPulse(e)
	return nil
}

// PutTaskPulse implements team.Pulses: PutPulse, only if the entry's task is in its project.
func (s *Store) PutTaskPulse(ctx context.Context, e pulse.Entry) error {
	id := ""
	if e.TaskID != nil {
		id = *e.TaskID
	}
	s.mu.Lock()
	t, ok := s.tasks[id]
	s.mu.Unlock()
	if !ok || t.Project != e.Project {
		return fmt.Errorf("put pulse of %s on task %s: %w", e.AgentID, id, team.ErrConflict)
	}
	return s.PutPulse(ctx, e)
}

// Pulse implements team.Pulses: the project's entries, most recently updated first.
func (s *Store) Pulse(_ context.Context, project string) ([]pulse.Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]pulse.Entry, 0, len(s.pulses[project]))
	for _, e := range s.pulses[project] {
		out = append(out, copyPulse(e))
	}
	slices.SortFunc(out, func(a, b pulse.Entry) int {
		if c := b.UpdatedAt.Compare(a.UpdatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.AgentID, b.AgentID)
	})
	return out, nil
}
