package team

import (
	"context"

	"github.com/useprickle/prickle/shared/auth/identity"
)

// ClaimSettings is what a runner reads of a project to claim the files its
// runs edit and guard their edits (POST /runner/project): who the caller is,
// the project's file guard and how long a Team Pulse entry stays live.
type ClaimSettings struct {
	Agent             string `json:"agent"`
	Project           string `json:"project"`
	FileGuard         string `json:"file_guard"`
	PulseStaleSeconds int64  `json:"pulse_stale_seconds"`
}

// ClaimSettings returns the file-claim settings of a project the caller
// belongs to; any other project is refused as if it did not exist.
func (s *Service) ClaimSettings(ctx context.Context, c identity.Caller, slug string) (ClaimSettings, error) {
	if err := s.joined(ctx, c, slug); err != nil {
		return ClaimSettings{}, err
	}
	p, err := s.project(ctx, c, slug)
	if err != nil {
		return ClaimSettings{}, err
	}
	return ClaimSettings{Agent: c.Agent, Project: p.Slug, FileGuard: p.Guard(), PulseStaleSeconds: int64(p.StaleAfter().Seconds())}, nil
}
