package teamtest

import (
	"context"

	"github.com/useprickle/prickle/shared/domain/audit"
)

// AppendAudit implements team.AuditLog.
func (s *Store) AppendAudit(_ context.Context, entries ...audit.Entry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.audit = append(s.audit, entries...)
	return nil
}

// ProjectAudit implements team.AuditLog: the project's entries in time order.
func (s *Store) ProjectAudit(_ context.Context, project string) ([]audit.Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []audit.Entry{}
	for _, e := range s.audit {
		if e.Project == project {
			out = append(out, e)
		}
	}
	audit.Sort(out)
	return out, nil
}
