// Package admin holds the operator's commands that no agent tool may do:
// create projects, owners and agents, mint and revoke agent tokens, start a
// run for a task, and record an owner's decision (tokens through shared/team/mint).
package admin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/useprickle/prickle/shared/domain/audit"
	"github.com/useprickle/prickle/shared/domain/pulse"
	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/mint"
)

// Store is what the admin commands write beyond the team service's reads.
type Store interface {
	mint.Store // the team service's reads and the tokens
	PutProject(ctx context.Context, p team.Project) error
	PutOwner(ctx context.Context, o team.Owner) error
	Owner(ctx context.Context, name string) (team.Owner, error)
	PutAgent(ctx context.Context, a team.Agent) error
}

// Admin carries out operator commands.
type Admin struct {
	Store Store
	Now   func() time.Time
}

// New builds an Admin on the real clock.
func New(s Store) *Admin { return &Admin{Store: s, Now: time.Now} }

// CreateProject creates or updates a project.
func (a *Admin) CreateProject(ctx context.Context, p team.Project) error {
	if p.StepDeadline == 0 {
		p.StepDeadline = step.DefaultPendingDeadline
	}
	if _, err := pulse.Guard(p.FileGuard); err != nil {
		return fmt.Errorf("create project %s: %w", p.Slug, err)
	}
	if err := a.Store.PutProject(ctx, p); err != nil {
		return fmt.Errorf("create project %s: %w", p.Slug, err)
	}
	return nil
}

// SetFileGuard sets what runners do with an edit of a file another agent of
// the project holds (pulse.Guards), keeping the project's other settings.
func (a *Admin) SetFileGuard(ctx context.Context, slug, guard string) error {
	g, err := pulse.Guard(guard)
	if err != nil {
		return fmt.Errorf("set file guard of %s: %w", slug, err)
	}
	return update(ctx, "set file guard of "+slug, a.Store.Project, a.Store.PutProject, slug, func(p *team.Project) { p.FileGuard = g })
}

// update reads the record of key with get, changes it with edit and writes
// it back with put, keeping the rest of it; op begins its errors.
func update[T any](ctx context.Context, op string, get func(context.Context, string) (T, error), put func(context.Context, T) error, key string, edit func(*T)) error {
	v, err := get(ctx, key)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	edit(&v)
	if err := put(ctx, v); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return nil
}

// CreateOwner creates or updates an owner.
func (a *Admin) CreateOwner(ctx context.Context, o team.Owner) error {
	if o.SlackUserID != "" && !team.ValidSlackUserID(o.SlackUserID) {
		return fmt.Errorf("create owner %s: %w", o.Name, notSlackUser(o.SlackUserID))
	}
	if err := a.Store.PutOwner(ctx, o); err != nil {
		return fmt.Errorf("create owner %s: %w", o.Name, err)
	}
	return nil
}

func notSlackUser(id string) error {
	return fmt.Errorf("%q is not a Slack member id (U0123ABC or W0123ABC: open the person's profile, ⋮, Copy member ID; a channel id or name is refused)", id)
}

// SetSlackUser records an existing owner's Slack member id, keeping the rest
// of the record: only that member decides with the Slack buttons, and gets
// sign-in links as a direct message.
func (a *Admin) SetSlackUser(ctx context.Context, owner, id string) error {
	if !team.ValidSlackUserID(id) {
		return fmt.Errorf("set Slack member id of %s: %w", owner, notSlackUser(id))
	}
	return update(ctx, "set Slack member id of "+owner, a.Store.Owner, a.Store.PutOwner, owner, func(o *team.Owner) { o.SlackUserID = id })
}

// CreateAgent adds an owner's agent to projects, creating it if needed.
func (a *Admin) CreateAgent(ctx context.Context, id string, projects []string) error {
	owner, name, ok := strings.Cut(id, "/")
	if !ok || owner == "" || name == "" {
		return fmt.Errorf("agent id %q must be owner/agent", id)
	}
	existing, err := a.Store.Agent(ctx, id)
	if err != nil && !errors.Is(err, team.ErrNotFound) {
		return fmt.Errorf("load agent %s: %w", id, err)
	}
	all := existing.Projects
	for _, p := range projects {
		if _, err := a.Store.Project(ctx, p); err != nil {
			return fmt.Errorf("project %s for agent %s: %w", p, id, err)
		}
		if !slices.Contains(all, p) {
			all = append(all, p)
		}
	}
	if err := a.Store.PutAgent(ctx, team.Agent{ID: id, Owner: owner, Projects: all}); err != nil {
		return fmt.Errorf("store agent %s: %w", id, err)
	}
	return nil
}

// tokens is the minting the commands share with the waker and the runner API.
func (a *Admin) tokens() *mint.Tokens { return &mint.Tokens{Store: a.Store, Now: a.Now} }

// MintAgentToken issues a long-lived token for an agent; the secret is shown once.
func (a *Admin) MintAgentToken(ctx context.Context, agentID string) (string, error) {
	return a.tokens().AgentToken(ctx, agentID)
}

// RevokeAgentTokens revokes every token of an agent, run tokens included.
func (a *Admin) RevokeAgentTokens(ctx context.Context, agentID string) (int, error) {
	return a.tokens().RevokeAgentTokens(ctx, agentID)
}

// StartRun mints a run token for a task, as Prickle does when it wakes a run.
func (a *Admin) StartRun(ctx context.Context, by mint.Minter, agentID, taskID, resumes string) (mint.Run, error) {
	return a.tokens().StartRun(ctx, by, agentID, taskID, resumes)
}

// EndRun ends a run's token, whose hash is given.
func (a *Admin) EndRun(ctx context.Context, agentID, taskID, runID, hash, actor, via string) error {
	return a.tokens().EndRun(ctx, agentID, taskID, runID, hash, actor, via)
}

// DecideStep records an owner's decision on a pending step (approval links
// replace this command for owners; it stays for operators and tests).
func (a *Admin) DecideStep(ctx context.Context, owner, taskID, stepID string, approve bool, message string) (step.Step, error) {
	svc := team.New(a.Store)
	svc.Now = a.Now
	st, err := svc.DecideStep(ctx, owner, taskID, stepID, approve, nil, message, audit.ViaAdmin)
	var refusal *task.Refusal
	if errors.As(err, &refusal) {
		return step.Step{}, errors.New(refusal.Msg)
	}
	return st, err
}
