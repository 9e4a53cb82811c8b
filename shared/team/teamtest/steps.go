package teamtest

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/useprickle/prickle/shared/domain/audit"
	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/team"
)

// Step implements team.Steps.
func (s *Store) Step(_ context.Context, taskID, stepID string) (step.Step, error) {
	return stored(s, func() map[string]step.Step { return s.steps[taskID] }, stepID, copyStep, "step "+stepID+" of task "+taskID)
}

// StepsForTask implements team.Steps: every stored step of the task, oldest
// first, whatever its status (empty for a task with none).
func (s *Store) StepsForTask(_ context.Context, taskID string) ([]step.Step, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]step.Step, 0, len(s.steps[taskID]))
	for _, st := range s.steps[taskID] {
		out = append(out, copyStep(st))
	}
	slices.SortFunc(out, func(a, b step.Step) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

// SaveSteps implements team.Steps as one transaction: every step write is
// conditional on its stored status being Prev (Prev empty: on the step not
// existing), the optional move on the task's version being PrevVersion (the
// optional spend is added with no condition); if
// any condition fails nothing is written and the error is team.ErrConflict.
// Two writes to the same step in one change are refused, as DynamoDB
// refuses two operations on one item in a transaction.
func (s *Store) SaveSteps(_ context.Context, c team.StepChange) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := map[[2]string]bool{}
	for _, w := range c.Steps {
		key := [2]string{w.Step.TaskID, w.Step.ID}
		if w.Step.TaskID == "" || w.Step.ID == "" {
			return fmt.Errorf("save steps: a step needs a task id and a step id")
		}
		if seen[key] {
			return fmt.Errorf("save steps: step %s written twice in one change", w.Step.ID)
		}
		seen[key] = true
		cur, exists := s.steps[w.Step.TaskID][w.Step.ID]
		switch {
		case w.Prev == "" && exists:
			return fmt.Errorf("save new step %s: it exists already: %w", w.Step.ID, team.ErrConflict)
		case w.Prev != "" && !exists:
			return fmt.Errorf("save step %s: expected %s, not stored: %w", w.Step.ID, w.Prev, team.ErrConflict)
		case w.Prev != "" && cur.Status != w.Prev:
			return fmt.Errorf("save step %s: expected %s, stored %s: %w", w.Step.ID, w.Prev, cur.Status, team.ErrConflict)
		}
	}
	if c.Move != nil {
		if err := s.checkMove(c.PrevVersion, *c.Move); err != nil {
			return fmt.Errorf("save steps: %w", err)
		}
	}
	for _, w := range c.Steps {
		if s.steps[w.Step.TaskID] == nil {
			s.steps[w.Step.TaskID] = map[string]step.Step{}
		}
		s.steps[w.Step.TaskID][w.Step.ID] = copyStep(w.Step)
		s.audit = append(s.audit, audit.ForStep(w.Step, w.Prev, c.At))
	}
	if c.Move != nil {
		s.applyMove(c.PrevVersion, *c.Move)
	}
	if c.Spend != nil {
		key := *c.Spend
		key.Spent += s.spend[spendKey(key)].Spent
		s.spend[spendKey(key)] = key
	}
	return nil
}
