// Package teamtest is an in-memory team.Store: the fake for domain tests only.
// It also keeps what the web pages read beyond it (owners, a project's
// agents, sign-in links, sessions and connected OAuth clients: web.Store)
// and the team's model spend (team.ModelSpendStore), so the pages' tests run
// against the same fake.
//
// It keeps the contract of the ports in shared/team, including the parts
// tests lean on: every write is conditional and a lost race is team.ErrConflict
// with nothing written; SaveSteps is all-or-nothing; missing items are
// team.ErrNotFound; ListTasks pages newest first with an opaque cursor that
// never skips or repeats a task and is refused (team.ErrBadCursor) for any
// other query. It is not a model of DynamoDB's latency, limits or
// consistency, so storage behaviour is tested against the real store.
package teamtest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/useprickle/prickle/shared/domain/audit"
	"github.com/useprickle/prickle/shared/domain/budget"
	"github.com/useprickle/prickle/shared/domain/grant"
	"github.com/useprickle/prickle/shared/domain/pulse"
	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/team"
)

// DefaultLimit and MaxLimit bound ListTasks pages as the real store does
// (team.TaskQuery.PageLimit): a limit below 1 means DefaultLimit, above
// MaxLimit means MaxLimit.
const (
	DefaultLimit = team.DefaultTaskLimit
	MaxLimit     = team.MaxTaskLimit
)

// Store is the in-memory team.Store. The zero value is not ready; use New.
type Store struct {
	mu       sync.Mutex
	agents   map[string]team.Agent
	projects map[string]team.Project
	tasks    map[string]task.Task
	history  map[string][]task.Event
	steps    map[string]map[string]step.Step // task id → step id → step
	pulses   map[string]map[string]pulse.Entry
	grants   map[string]grant.Grant   // grant id → grant
	budgets  map[string]budget.Budget // project#owner#unit → budget
	spend    map[string]budget.Spend  // project#day#owner#unit#agent → spend
	audit    []audit.Entry
	people
	spending
}

var _ team.Store = (*Store)(nil)

// New returns an empty store.
func New() *Store {
	return &Store{
		agents:   map[string]team.Agent{},
		projects: map[string]team.Project{},
		tasks:    map[string]task.Task{},
		history:  map[string][]task.Event{},
		steps:    map[string]map[string]step.Step{},
		pulses:   map[string]map[string]pulse.Entry{},
		grants:   map[string]grant.Grant{},
		budgets:  map[string]budget.Budget{},
		spend:    map[string]budget.Spend{},
		people:   newPeople(),
		spending: newSpending(),
	}
}

// AddProject seeds a project, replacing any with the same slug.
func (s *Store) AddProject(p team.Project) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p.OwnerApprovalTypes = slices.Clone(p.OwnerApprovalTypes)
	s.projects[p.Slug] = p
}

// AddAgent seeds an agent, replacing any with the same id. An empty Owner
// is taken from the id (owner/agent).
func (s *Store) AddAgent(a team.Agent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a.Owner == "" {
		a.Owner, _, _ = strings.Cut(a.ID, "/")
	}
	a.Projects = slices.Clone(a.Projects)
	s.agents[a.ID] = a
}

// AddTask seeds a task as stored, bypassing the lifecycle: any state, at
// version 1 unless it carries one. Its history is the given events, or one
// hand_off line when none are given.
func (s *Store) AddTask(t task.Task, history ...task.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.Version == 0 {
		t.Version = 1
	}
	if len(history) == 0 {
		history = []task.Event{{At: t.CreatedAt, By: t.Requester, Action: "hand_off", To: t.State}}
	}
	s.tasks[t.ID] = copyTask(t)
	s.history[t.ID] = nil
	for _, e := range history {
		s.appendEvent(t.ID, e)
	}
}

// stored is every port's lookup by key: under the lock, a copy of the item
// in the map items returns, or ErrNotFound naming what was looked for.
func stored[K comparable, V any](s *Store, items func() map[K]V, key K, cp func(V) V, what string) (V, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := items()[key]
	if !ok {
		var none V
		return none, fmt.Errorf("%s: %w", what, team.ErrNotFound)
	}
	return cp(v), nil
}

// Agent implements team.Directory.
func (s *Store) Agent(_ context.Context, id string) (team.Agent, error) {
	return stored(s, func() map[string]team.Agent { return s.agents }, id, func(a team.Agent) team.Agent {
		a.Projects = slices.Clone(a.Projects)
		return a
	}, "agent "+id)
}

// Project implements team.Directory.
func (s *Store) Project(_ context.Context, slug string) (team.Project, error) {
	return stored(s, func() map[string]team.Project { return s.projects }, slug, func(p team.Project) team.Project {
		p.OwnerApprovalTypes = slices.Clone(p.OwnerApprovalTypes)
		return p
	}, "project "+slug)
}

// Task implements team.Tasks.
func (s *Store) Task(_ context.Context, id string) (task.Task, error) {
	return stored(s, func() map[string]task.Task { return s.tasks }, id, copyTask, "task "+id)
}

// History implements team.Tasks: the task's events, oldest first.
func (s *Store) History(_ context.Context, id string) ([]task.Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.tasks[id]; !ok {
		return nil, fmt.Errorf("history of task %s: %w", id, team.ErrNotFound)
	}
	out := make([]task.Event, len(s.history[id]))
	for i, e := range s.history[id] {
		out[i] = copyEvent(e)
	}
	return out, nil
}

// TaskWithHistory implements team.Tasks: Task and History together.
func (s *Store) TaskWithHistory(ctx context.Context, id string) (task.Task, []task.Event, error) {
	t, err := s.Task(ctx, id)
	if err != nil {
		return task.Task{}, nil, err
	}
	h, err := s.History(ctx, id)
	if err != nil {
		return task.Task{}, nil, err
	}
	return t, h, nil
}

// CreateTask implements team.Tasks: the task is stored at version 1, only
// if no task has its id (team.ErrConflict otherwise).
func (s *Store) CreateTask(_ context.Context, t task.Task, first task.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.ID == "" {
		return fmt.Errorf("create task: empty id")
	}
	if _, ok := s.tasks[t.ID]; ok {
		return fmt.Errorf("create task %s: %w", t.ID, team.ErrConflict)
	}
	t.Version = 1
	s.tasks[t.ID] = copyTask(t)
	s.appendEvent(t.ID, first)
	return nil
}

// ApplyMove implements team.Tasks: m.Task is stored as prevVersion+1 and
// m.Event appended, only if the stored task is still at prevVersion. Like
// the real store's condition on the stored version, a missing task fails it
// too (team.ErrConflict).
func (s *Store) ApplyMove(_ context.Context, prevVersion int, m task.Move) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkMove(prevVersion, m); err != nil {
		return err
	}
	s.applyMove(prevVersion, m)
	return nil
}

func (s *Store) checkMove(prevVersion int, m task.Move) error {
	if prevVersion < 1 {
		return fmt.Errorf("move task %s: previous version %d is not a stored version", m.Task.ID, prevVersion)
	}
	cur, ok := s.tasks[m.Task.ID]
	if !ok {
		return fmt.Errorf("move task %s: not stored: %w", m.Task.ID, team.ErrConflict)
	}
	if cur.Version != prevVersion {
		return fmt.Errorf("move task %s from version %d, stored version is %d: %w", m.Task.ID, prevVersion, cur.Version, team.ErrConflict)
	}
	return nil
}

func (s *Store) applyMove(prevVersion int, m task.Move) {
	t := copyTask(m.Task)
	t.Version = prevVersion + 1
	s.tasks[t.ID] = t
	s.appendEvent(t.ID, m.Event)
}

func (s *Store) appendEvent(id string, e task.Event) {
	e = copyEvent(e)
	e.Seq = len(s.history[id]) + 1
	s.history[id] = append(s.history[id], e)
}
