package team

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/useprickle/prickle/shared/domain/audit"
	"github.com/useprickle/prickle/shared/domain/budget"
	"github.com/useprickle/prickle/shared/domain/task"
)

// SetBudget stores an owner's daily budget per agent for their own agents
// in a project and one unit; auto-allow lets spending steps within what is
// left go ahead without asking, when their input holds the declared amount
// where the budget reads it. The owner must have an agent in the project.
func (s *Service) SetBudget(ctx context.Context, b budget.Budget, via string) (budget.Budget, error) {
	if err := b.Check(); err != nil {
		return budget.Budget{}, task.Refusef("%v", err)
	}
	if _, err := s.Store.Project(ctx, b.Project); errors.Is(err, ErrNotFound) {
		return budget.Budget{}, task.Refusef("no project %s", b.Project)
	} else if err != nil {
		return budget.Budget{}, fmt.Errorf("load project %s: %w", b.Project, err)
	}
	b.SetBy, b.SetAt = b.Owner, s.now()
	if err := s.Store.PutBudget(ctx, b); err != nil {
		return budget.Budget{}, fmt.Errorf("store budget: %w", err)
	}
	mode := "ask every time, showing what is left"
	if b.AutoAllow {
		mode = "allow within it without asking, reading the amount from " + b.ReadsFrom()
	}
	s.audit(ctx, audit.Entry{At: b.SetAt, Project: b.Project, Action: audit.BudgetSet, Actor: "owner:" + b.Owner, Via: via,
		Detail: fmt.Sprintf("%s %s per agent per day for %s's agents; %s", b.PerAgentPerDay, b.Unit, b.Owner, mode),
		Key:    "budget#" + b.Owner + "#" + b.Unit})
	return b, nil
}

// ProjectAudit is a project's trail in time order: the audit log's entries
// (steps, result decisions, grants, budgets, tokens) merged with every
// task's history (hand-offs, accepts, reviews, cancels), whose lines about
// steps and owner decisions the log already says better.
func (s *Service) ProjectAudit(ctx context.Context, project string) ([]audit.Entry, error) {
	entries, err := s.Store.ProjectAudit(ctx, project)
	if err != nil {
		return nil, fmt.Errorf("audit of %s: %w", project, err)
	}
	q := TaskQuery{Project: project, Role: task.RoleAny, Limit: MaxTaskLimit}
	for {
		page, err := s.Store.ListTasks(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("tasks of %s: %w", project, err)
		}
		for _, t := range page.Tasks {
			h, err := s.Store.History(ctx, t.ID)
			if err != nil {
				return nil, fmt.Errorf("history of %s: %w", t.ID, err)
			}
			for _, line := range h {
				switch line.Action {
				case task.ActionStepRequested, task.ActionStepDecided, task.ActionStepExpired, task.ActionOwnerApprove, task.ActionOwnerRefuse:
					continue
				}
				if strings.HasPrefix(line.By, "owner:") && (line.Action == task.ActionHandOff || strings.HasPrefix(line.Action, "review_")) {
					continue // an owner's move on the board: the log has it, with where (HandOffOnBoard, ReviewOnBoard)
				}
				entries = append(entries, audit.FromHistory(project, t.ID, line))
			}
		}
		if page.NextCursor == "" {
			break
		}
		q.Cursor = page.NextCursor
	}
	audit.Sort(entries)
	return entries, nil
}
