package teamtest

import (
	"context"
	"fmt"
	"strings"

	"github.com/useprickle/prickle/shared/domain/budget"
	"github.com/useprickle/prickle/shared/team"
)

// Budget implements team.Budgets.
func (s *Store) Budget(_ context.Context, project, owner, unit string) (budget.Budget, error) {
	return stored(s, func() map[string]budget.Budget { return s.budgets }, project+"#"+owner+"#"+unit,
		func(b budget.Budget) budget.Budget { return b }, "budget of "+owner)
}

// ProjectBudgets implements team.Budgets.
func (s *Store) ProjectBudgets(_ context.Context, project string) ([]budget.Budget, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []budget.Budget{}
	for _, b := range s.budgets {
		if b.Project == project {
			out = append(out, b)
		}
	}
	return out, nil
}

// PutBudget implements team.Budgets.
func (s *Store) PutBudget(_ context.Context, b budget.Budget) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.budgets[b.Project+"#"+b.Owner+"#"+b.Unit] = b
	return nil
}

func spendKey(k budget.Spend) string {
	return strings.Join([]string{k.Project, k.Day, k.Owner, k.Unit, k.Agent}, "#")
}

// AddSpend implements team.Budgets: within limit, when one is given.
func (s *Store) AddSpend(_ context.Context, key budget.Spend, amount budget.Micros, limit *budget.Micros) (budget.Micros, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := s.spend[spendKey(key)]
	if limit != nil && cur.Spent+amount > *limit {
		return 0, fmt.Errorf("add spend: %w", team.ErrConflict)
	}
	key.Spent = cur.Spent + amount
	s.spend[spendKey(key)] = key
	return key.Spent, nil
}

// Spent implements team.Budgets.
func (s *Store) Spent(_ context.Context, key budget.Spend) (budget.Micros, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.spend[spendKey(key)].Spent, nil
}

// ProjectSpend implements team.Budgets.
func (s *Store) ProjectSpend(_ context.Context, project, day string) ([]budget.Spend, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []budget.Spend{}
	for _, sp := range s.spend {
		if sp.Project == project && sp.Day == day {
			out = append(out, sp)
		}
	}
	return out, nil
}
