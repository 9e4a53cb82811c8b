package team

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/domain/audit"
	"github.com/useprickle/prickle/shared/domain/task"
)

// OwnerAct is an owner acting on the board or a task page through one of
// their own agents: the agent is the task's requester, as the tools need,
// and the history line and the audit say the owner did it, and where.
type OwnerAct struct {
	Owner string
	Agent string
	// Via is where, as the audit records it: audit.ViaBoard or
	// audit.ViaPage, with how the owner signed in (audit.SignedIn).
	Via string
}

// mark makes a history line the owner's: by owner:<name>, its note saying
// where and for which agent (after the feedback, when there is one).
func (a *OwnerAct) mark(e *task.Event, feedback string) {
	e.By = "owner:" + a.Owner
	note := fmt.Sprintf("by %s on the %s, as %s", a.Owner, a.Via, a.Agent)
	if strings.TrimSpace(feedback) != "" {
		note = feedback + "\n\n(" + note + ")"
	}
	e.Note = &note
}

// entry is the audit entry of the owner's move.
func (a *OwnerAct) entry(t task.Task, line task.Event, detail string) audit.Entry {
	return audit.Entry{At: line.At, Project: t.Project, Action: line.Action, Actor: "owner:" + a.Owner, Via: a.Via,
		TaskID: t.ID, Detail: detail, Key: fmt.Sprintf("%s#owner#%d", t.ID, t.Version)}
}

// HandOffOnBoard is an owner creating a task on the project board: the
// requester is one of the owner's own agents, and everything else is
// hand_off_task's, with its rules and refusals (the project the requester
// belongs to, the assignee an agent of it, no agent handing a task to
// itself, the dependencies tasks of the project).
func (s *Service) HandOffOnBoard(ctx context.Context, owner, requester, via string, in HandOffInput) (TaskOutput, error) {
	c, err := s.ownAgent(ctx, owner, requester)
	if err != nil {
		return TaskOutput{}, err
	}
	return s.handOff(ctx, c, in, &OwnerAct{Owner: owner, Agent: requester, Via: via})
}

// ReviewOnBoard is an owner reviewing a returned result on the task page,
// as review_result does for the requester, which must be one of the
// owner's own agents.
func (s *Service) ReviewOnBoard(ctx context.Context, owner, via string, in ReviewInput) (TaskOutput, error) {
	t, err := s.Store.Task(ctx, in.TaskID)
	if errors.Is(err, ErrNotFound) {
		return TaskOutput{}, task.Refusef("no task %s", in.TaskID)
	}
	if err != nil {
		return TaskOutput{}, fmt.Errorf("load task %s: %w", in.TaskID, err)
	}
	if ownerOf(t.Requester) != owner {
		return TaskOutput{}, task.Refusef("the result of task %s is for its requester %s to review, and %s is not one of your agents", t.ID, t.Requester, t.Requester)
	}
	c, err := s.ownAgent(ctx, owner, t.Requester)
	if err != nil {
		return TaskOutput{}, err
	}
	return s.review(ctx, c, in, &OwnerAct{Owner: owner, Agent: t.Requester, Via: via})
}

// ownAgent is the caller an owner acts as: one of their own agents.
func (s *Service) ownAgent(ctx context.Context, owner, agent string) (identity.Caller, error) {
	notYours := task.Refusef("%s is not one of your agents, %s: choose one of yours as the requester", agent, owner)
	if owner == "" || ownerOf(agent) != owner {
		return identity.Caller{}, notYours
	}
	a, err := s.Store.Agent(ctx, agent)
	if errors.Is(err, ErrNotFound) {
		return identity.Caller{}, notYours
	}
	if err != nil {
		return identity.Caller{}, fmt.Errorf("load agent %s: %w", agent, err)
	}
	return identity.Caller{Agent: agent, Owner: owner, Kind: identity.KindAgent, Projects: a.Projects, ProjectsKnown: true}, nil
}
