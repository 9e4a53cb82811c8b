package team

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/useprickle/prickle/shared/domain/audit"
	"github.com/useprickle/prickle/shared/domain/grant"
	"github.com/useprickle/prickle/shared/domain/task"
)

// GrantRequest is what an owner asks for besides "approve once", from the
// step they are deciding: the same call on this task, or calls of the same
// tool whose Field matches Pattern, for Hours.
type GrantRequest struct {
	Scope   grant.Scope
	Hours   int
	Field   string
	Pattern string
	Via     string
}

// CheckGrant refuses a request that could not be stored, before anything is decided.
func CheckGrant(r GrantRequest) error {
	if err := grant.CheckHours(r.Hours); err != nil {
		return task.Refusef("%v", err)
	}
	switch r.Scope {
	case grant.ScopeCall:
	case grant.ScopePattern:
		if err := grant.CheckPattern(r.Field, r.Pattern); err != nil {
			return task.Refusef("%v", err)
		}
	default:
		return task.Refusef("a grant covers the same call or a pattern, not %q", r.Scope)
	}
	return nil
}

// GrantFromStep stores a standing grant an owner gives while deciding a
// step of one of their agents: it covers that agent, that project and that
// tool only, and lasts the hours asked (at most grant.MaxHours).
func (s *Service) GrantFromStep(ctx context.Context, owner, taskID, stepID string, r GrantRequest) (grant.Grant, error) {
	if err := CheckGrant(r); err != nil {
		return grant.Grant{}, err
	}
	st, err := s.Store.Step(ctx, taskID, stepID)
	if errors.Is(err, ErrNotFound) {
		return grant.Grant{}, task.Refusef("no step %s on task %s", stepID, taskID)
	}
	if err != nil {
		return grant.Grant{}, fmt.Errorf("load step %s: %w", stepID, err)
	}
	if o := ownerOf(st.Agent); o != owner {
		return grant.Grant{}, task.Refusef("step %s was asked by %s, whose owner is %s, not %s", stepID, st.Agent, o, owner)
	}
	now := s.now()
	if st.DecidedAt != nil && !now.After(*st.DecidedAt) {
		// Given with the decision: the trail lists it just after the approval.
		now = st.DecidedAt.Add(time.Millisecond)
	}
	g := grant.Grant{
		ID: s.NewID("grt_"), Project: st.Project, Owner: owner, Agent: st.Agent, Scope: r.Scope,
		ToolName: st.ToolName, FromStep: st.ID, CreatedAt: now, ExpiresAt: now.Add(time.Duration(r.Hours) * time.Hour),
	}
	if r.Scope == grant.ScopeCall {
		g.TaskID, g.Fingerprint, g.Input = st.TaskID, st.Fingerprint, st.Input
	} else {
		g.Field, g.Pattern = r.Field, r.Pattern
	}
	if err := s.Store.PutGrant(ctx, g); err != nil {
		return grant.Grant{}, fmt.Errorf("store grant: %w", err)
	}
	s.audit(ctx, audit.Entry{At: now, Project: g.Project, Action: audit.GrantCreated, Actor: "owner:" + owner, Via: r.Via,
		TaskID: st.TaskID, StepID: st.ID, GrantID: g.ID, Tool: g.ToolName,
		Detail: fmt.Sprintf("%s, for %d h until %s", g.Describe(), r.Hours, g.ExpiresAt.Format(time.RFC3339)), Key: g.ID + "#created"})
	return g, nil
}

// RevokeGrant ends an owner's grant at once: the next call it would have
// allowed asks again. Only the owner who gave it may revoke it.
func (s *Service) RevokeGrant(ctx context.Context, owner, project, grantID, via string) (grant.Grant, error) {
	grants, err := s.Store.ProjectGrants(ctx, project)
	if err != nil {
		return grant.Grant{}, fmt.Errorf("read grants of %s: %w", project, err)
	}
	for _, g := range grants {
		if g.ID != grantID {
			continue
		}
		if g.Owner != owner {
			return grant.Grant{}, task.Refusef("grant %s was given by %s; only they can revoke it", grantID, g.Owner)
		}
		now := s.now()
		err := s.Store.RevokeGrant(ctx, project, grantID, owner, now)
		if errors.Is(err, ErrConflict) {
			return grant.Grant{}, task.Refusef("grant %s is already revoked", grantID)
		}
		if err != nil {
			return grant.Grant{}, fmt.Errorf("revoke grant %s: %w", grantID, err)
		}
		g.RevokedAt, g.RevokedBy = &now, owner
		s.audit(ctx, audit.Entry{At: now, Project: project, Action: audit.GrantRevoked, Actor: "owner:" + owner, Via: via,
			TaskID: g.TaskID, GrantID: g.ID, Tool: g.ToolName, Detail: fmt.Sprintf("%s; used %d times", g.Describe(), g.Uses), Key: g.ID + "#revoked"})
		return g, nil
	}
	return grant.Grant{}, task.Refusef("no grant %s in project %s", grantID, project)
}

// audit appends entries to the trail; a failure is logged for the operator
// and never undoes the change it records.
func (s *Service) audit(ctx context.Context, entries ...audit.Entry) {
	if err := s.Store.AppendAudit(context.WithoutCancel(ctx), entries...); err != nil {
		slog.ErrorContext(ctx, "append audit failed", "entries", len(entries), "error", err.Error())
	}
}
