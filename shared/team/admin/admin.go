// Package admin holds the operator's commands that no agent tool may do:
// create projects, owners and agents, mint and revoke agent tokens, start a
// run for a task (minting its run token), and record an owner's decision.
// Token secrets are returned once and stored only as hashes.
package admin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/domain/audit"
	"github.com/useprickle/prickle/shared/domain/pulse"
	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/team"
)

// RunTokenLifetime is how long a run token works: long enough for one agent run.
const RunTokenLifetime = 4 * time.Hour

// Store is what the admin commands write beyond the team service's reads.
type Store interface {
	team.Store
	PutProject(ctx context.Context, p team.Project) error
	PutOwner(ctx context.Context, o team.Owner) error
	Owner(ctx context.Context, name string) (team.Owner, error)
	PutAgent(ctx context.Context, a team.Agent) error
	PutToken(ctx context.Context, t identity.Token) error
	RevokeToken(ctx context.Context, hash string) error
	RevokeAgentTokens(ctx context.Context, agentID string) (int, error)
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
	p, err := a.Store.Project(ctx, slug)
	if err != nil {
		return fmt.Errorf("set file guard of %s: %w", slug, err)
	}
	p.FileGuard = g
	if err := a.Store.PutProject(ctx, p); err != nil {
		return fmt.Errorf("set file guard of %s: %w", slug, err)
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
	o, err := a.Store.Owner(ctx, owner)
	if err != nil {
		return fmt.Errorf("set Slack member id of %s: %w", owner, err)
	}
	o.SlackUserID = id
	if err := a.Store.PutOwner(ctx, o); err != nil {
		return fmt.Errorf("set Slack member id of %s: %w", owner, err)
	}
	return nil
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

// MintAgentToken issues a long-lived token for an agent; the secret is shown once.
func (a *Admin) MintAgentToken(ctx context.Context, agentID string) (string, error) {
	if _, err := a.Store.Agent(ctx, agentID); err != nil {
		return "", fmt.Errorf("agent %s: %w", agentID, err)
	}
	return a.mint(ctx, ByOperator, identity.Token{Kind: identity.KindAgent, Agent: agentID})
}

// RevokeAgentTokens revokes every token of an agent, run tokens included.
func (a *Admin) RevokeAgentTokens(ctx context.Context, agentID string) (int, error) {
	n, err := a.Store.RevokeAgentTokens(ctx, agentID)
	if err != nil {
		return 0, fmt.Errorf("revoke tokens of %s: %w", agentID, err)
	}
	now := a.Now().UTC()
	err = a.auditAgent(ctx, agentID, "", func(project string) audit.Entry {
		return audit.Entry{At: now, Project: project, Action: audit.TokensRevoked, Actor: ByOperator.Actor, Via: ByOperator.Via,
			Detail: fmt.Sprintf("%d tokens of %s revoked", n, agentID), Key: "tokens#" + agentID + "#" + now.Format(time.RFC3339Nano)}
	})
	return n, err
}

// Run is a started run of an agent on a task, with its token shown once.
type Run struct {
	RunID      string `json:"run_id"`
	RunToken   string `json:"run_token"`
	TaskID     string `json:"task_id"`
	Agent      string `json:"agent"`
	ResumesRun string `json:"resumes_run,omitempty"`
}

// ErrNoRun means no run can start for that agent on that task (not one of
// its parties, or the task is closed): the waker skips such a wake-up
// instead of retrying it.
var ErrNoRun = errors.New("no run can start")

// StartRun mints a run token bound to (agent, task, run), as Prickle does
// when it wakes an agent's run; resumes names the run this one continues,
// and by who mints it (the audit trail says so). The agent is the task's
// assignee, or its requester (woken to review a result).
func (a *Admin) StartRun(ctx context.Context, by Minter, agentID, taskID, resumes string) (Run, error) {
	t, err := a.Store.Task(ctx, taskID)
	if errors.Is(err, team.ErrNotFound) {
		return Run{}, fmt.Errorf("task %s: %w: %w", taskID, ErrNoRun, err)
	}
	if err != nil {
		return Run{}, fmt.Errorf("task %s: %w", taskID, err)
	}
	if t.Assignee != agentID && t.Requester != agentID {
		return Run{}, fmt.Errorf("task %s is assigned to %s and requested by %s, not %s: %w", taskID, t.Assignee, t.Requester, agentID, ErrNoRun)
	}
	if !t.State.Open() {
		return Run{}, fmt.Errorf("task %s is %s; a run needs an open task: %w", taskID, t.State, ErrNoRun)
	}
	runID := team.RandomID("run_")
	exp := a.Now().UTC().Add(RunTokenLifetime)
	secret, err := a.mint(ctx, by, identity.Token{Kind: identity.KindRun, Agent: agentID, TaskID: taskID, RunID: runID, ResumesRun: resumes, ExpiresAt: &exp})
	if err != nil {
		return Run{}, err
	}
	return Run{RunID: runID, RunToken: secret, TaskID: taskID, Agent: agentID, ResumesRun: resumes}, nil
}

// EndRun ends a run's token, whose hash is given: its runner said the run
// ended (actor the agent, via "prickle-runner"), or its wake-up was claimed
// again, so the earlier claim's run is over (actor "system", via the
// wake-up). A token already revoked is ended again without harm.
func (a *Admin) EndRun(ctx context.Context, agentID, taskID, runID, hash, actor, via string) error {
	if err := a.Store.RevokeToken(ctx, hash); err != nil {
		return fmt.Errorf("end run %s: %w", runID, err)
	}
	now := a.Now().UTC()
	return a.auditAgent(ctx, agentID, taskID, func(project string) audit.Entry {
		return audit.Entry{At: now, Project: project, Action: audit.TokenRevoked, Actor: actor, Via: via, TaskID: taskID,
			Detail: fmt.Sprintf("run token %s… of run %s ended", hash[:12], runID), Key: "token-end#" + hash[:16]}
	})
}

func (a *Admin) mint(ctx context.Context, by Minter, t identity.Token) (string, error) {
	secret, err := identity.NewSecret(t.Kind)
	if err != nil {
		return "", err
	}
	t.Hash = identity.Hash(secret)
	t.CreatedAt = a.Now().UTC()
	if err := a.Store.PutToken(ctx, t); err != nil {
		return "", fmt.Errorf("store %s token for %s: %w", t.Kind, t.Agent, err)
	}
	// The audit names the token by the start of its hash, never by its secret.
	err = a.auditAgent(ctx, t.Agent, t.TaskID, func(project string) audit.Entry {
		detail := fmt.Sprintf("%s token %s… for %s", t.Kind, t.Hash[:12], t.Agent)
		if t.Kind == identity.KindRun {
			detail += fmt.Sprintf(", run %s", t.RunID)
			if t.ResumesRun != "" {
				detail += fmt.Sprintf(" resuming %s", t.ResumesRun)
			}
		}
		if by.For != "" {
			detail += "; " + by.For
		}
		return audit.Entry{At: t.CreatedAt, Project: project, Action: audit.TokenMinted, Actor: by.Actor, Via: by.Via,
			TaskID: t.TaskID, Detail: detail, Key: "token#" + t.Hash[:16]}
	})
	if err != nil {
		return "", err
	}
	return secret, nil
}

// auditAgent records an entry about an agent's tokens in the trail of the
// task's project (a run token) or of every project of the agent.
func (a *Admin) auditAgent(ctx context.Context, agentID, taskID string, entry func(project string) audit.Entry) error {
	var projects []string
	if taskID != "" {
		t, err := a.Store.Task(ctx, taskID)
		if err != nil {
			return fmt.Errorf("audit token of %s: task %s: %w", agentID, taskID, err)
		}
		projects = []string{t.Project}
	} else {
		ag, err := a.Store.Agent(ctx, agentID)
		if err != nil {
			return fmt.Errorf("audit tokens of %s: %w", agentID, err)
		}
		projects = ag.Projects
	}
	entries := make([]audit.Entry, 0, len(projects))
	for _, p := range projects {
		entries = append(entries, entry(p))
	}
	if err := a.Store.AppendAudit(ctx, entries...); err != nil {
		return fmt.Errorf("audit tokens of %s: %w", agentID, err)
	}
	return nil
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
