package teamtest

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/useprickle/prickle/shared/domain/budget"
	"github.com/useprickle/prickle/shared/domain/modelspend"
	"github.com/useprickle/prickle/shared/team"
)

var _ team.ModelSpendStore = (*Store)(nil)

// spending is the model spend the pages read and team.ModelSpend writes: runs by
// task, caps, days and months by agent. Its maps are guarded by Store.mu.
type spending struct {
	runs   map[string][]modelspend.Run    // task id → runs
	caps   map[string]modelspend.Cap      // agent → cap
	days   map[string]modelspend.DayState // agent#day → day
	months map[string]modelspend.Totals   // agent#month → month
}

func newSpending() spending {
	return spending{runs: map[string][]modelspend.Run{}, caps: map[string]modelspend.Cap{}, days: map[string]modelspend.DayState{}, months: map[string]modelspend.Totals{}}
}

func add(t modelspend.Totals, r modelspend.Run) modelspend.Totals {
	return modelspend.Totals{Cost: t.Cost + r.Cost, InputTokens: t.InputTokens + r.InputTokens, OutputTokens: t.OutputTokens + r.OutputTokens, Runs: t.Runs + 1}
}

// RecordRun stores a run once, adding it to its agent's day and month.
func (s *Store) RecordRun(_ context.Context, r modelspend.Run) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if slices.ContainsFunc(s.runs[r.TaskID], func(x modelspend.Run) bool { return x.RunID == r.RunID }) {
		return false, nil
	}
	s.runs[r.TaskID] = append(s.runs[r.TaskID], r)
	day, month := modelspend.Day(r.At), modelspend.Month(r.At)
	d := s.days[r.Agent+"#"+day]
	d.Agent, d.Day, d.Totals = r.Agent, day, add(d.Totals, r)
	s.days[r.Agent+"#"+day] = d
	s.months[r.Agent+"#"+month] = add(s.months[r.Agent+"#"+month], r)
	s.audit = append(s.audit, r.AuditEntry())
	return true, nil
}

// TaskRuns lists a task's runs, oldest first.
func (s *Store) TaskRuns(_ context.Context, taskID string) ([]modelspend.Run, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Clone(s.runs[taskID])
	slices.SortStableFunc(out, func(a, b modelspend.Run) int { return a.At.Compare(b.At) })
	return out, nil
}

// AgentsSpend reads each agent's cap, day and month.
func (s *Store) AgentsSpend(_ context.Context, agents []string, day, month string) ([]modelspend.AgentSpend, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]modelspend.AgentSpend, len(agents))
	for i, a := range agents {
		out[i] = modelspend.AgentSpend{Agent: a, Today: modelspend.DayState{Agent: a, Day: day}, Month: s.months[a+"#"+month]}
		if d, ok := s.days[a+"#"+day]; ok {
			out[i].Today = d
		}
		if c, ok := s.caps[a]; ok && c.PerDay > 0 {
			out[i].Cap = &c
		}
	}
	return out, nil
}

// PutModelCap stores a cap; PerDay 0 is none.
func (s *Store) PutModelCap(_ context.Context, c modelspend.Cap) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.caps[c.Agent] = c
	return nil
}

// MarkCapAsked is true for the first mark of (agent, day).
func (s *Store) MarkCapAsked(_ context.Context, agent, day string, at time.Time) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.days[agent+"#"+day]
	if d.AskedAt != nil {
		return false, nil
	}
	d.Agent, d.Day, d.AskedAt = agent, day, &at
	s.days[agent+"#"+day] = d
	return true, nil
}

// UnmarkCapAsked takes back the mark made at at, if the day is undecided.
func (s *Store) UnmarkCapAsked(_ context.Context, agent, day string, at time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.days[agent+"#"+day]
	if d.AskedAt != nil && d.AskedAt.Equal(at) && d.Decision == "" {
		d.AskedAt = nil
		s.days[agent+"#"+day] = d
	}
	return nil
}

// DecideCap records a decision once; team.ErrConflict when the day has one.
func (s *Store) DecideCap(_ context.Context, agent, day, decision, by string, at time.Time, raisedTo budget.Micros) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.days[agent+"#"+day]
	if d.Decision != "" {
		return fmt.Errorf("decide the cap of %s: %w", agent, team.ErrConflict)
	}
	d.Agent, d.Day, d.Decision, d.DecidedBy, d.DecidedAt, d.RaisedTo = agent, day, decision, by, &at, raisedTo
	s.days[agent+"#"+day] = d
	return nil
}
