// Package mint mints Prickle's tokens and records each in the audit trail:
// an agent's long-lived token, and the run token of a woken run, bound to
// (agent, task, run) and ended when the run ends. The waker, the runner API
// and the operator's commands mint through it; secrets are returned once
// and stored only as hashes.
package mint

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/domain/audit"
	"github.com/useprickle/prickle/shared/team"
)

// RunTokenLifetime is how long a run token works: long enough for one agent run.
const RunTokenLifetime = 4 * time.Hour

// Store is what minting reads and writes.
type Store interface {
	team.Store
	PutToken(ctx context.Context, t identity.Token) error
	RevokeToken(ctx context.Context, hash string) error
	RevokeAgentTokens(ctx context.Context, agentID string) (int, error)
}

// Tokens mints and ends tokens on a clock.
type Tokens struct {
	Store Store
	Now   func() time.Time
}

// New builds Tokens on the real clock.
func New(s Store) *Tokens { return &Tokens{Store: s, Now: time.Now} }

// AgentToken issues a long-lived token for an agent; the secret is shown once.
func (a *Tokens) AgentToken(ctx context.Context, agentID string) (string, error) {
	return a.AgentTokenBy(ctx, ByOperator, agentID)
}

// AgentTokenBy issues a long-lived token for an agent, minted by who the
// audit trail names (the operator, or an owner joining a runner).
func (a *Tokens) AgentTokenBy(ctx context.Context, by Minter, agentID string) (string, error) {
	if _, err := a.Store.Agent(ctx, agentID); err != nil {
		return "", fmt.Errorf("agent %s: %w", agentID, err)
	}
	return a.mint(ctx, by, identity.Token{Kind: identity.KindAgent, Agent: agentID})
}

// RevokeAgentTokens revokes every token of an agent, run tokens included.
func (a *Tokens) RevokeAgentTokens(ctx context.Context, agentID string) (int, error) {
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
func (a *Tokens) StartRun(ctx context.Context, by Minter, agentID, taskID, resumes string) (Run, error) {
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
func (a *Tokens) EndRun(ctx context.Context, agentID, taskID, runID, hash, actor, via string) error {
	if err := a.Store.RevokeToken(ctx, hash); err != nil {
		return fmt.Errorf("end run %s: %w", runID, err)
	}
	now := a.Now().UTC()
	return a.auditAgent(ctx, agentID, taskID, func(project string) audit.Entry {
		return audit.Entry{At: now, Project: project, Action: audit.TokenRevoked, Actor: actor, Via: via, TaskID: taskID,
			Detail: fmt.Sprintf("run token %s… of run %s ended", hash[:12], runID), Key: "token-end#" + hash[:16]}
	})
}

func (a *Tokens) mint(ctx context.Context, by Minter, t identity.Token) (string, error) {
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
func (a *Tokens) auditAgent(ctx context.Context, agentID, taskID string, entry func(project string) audit.Entry) error {
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
