// Package teamtest is an in-memory team.Store: the fake for domain tests only.
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
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/useprickle/prickle/shared/audit"
	"github.com/useprickle/prickle/shared/budget"
	"github.com/useprickle/prickle/shared/grant"
	"github.com/useprickle/prickle/shared/pulse"
	"github.com/useprickle/prickle/shared/step"
	"github.com/useprickle/prickle/shared/task"
	"github.com/useprickle/prickle/shared/team"
)

// DefaultLimit and MaxLimit bound ListTasks pages as the real store does: a
// limit below 1 means DefaultLimit, above MaxLimit means MaxLimit.
const (
	DefaultLimit = 20
	MaxLimit     = 100
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

// Agent implements team.Directory.
func (s *Store) Agent(_ context.Context, id string) (team.Agent, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.agents[id]
	if !ok {
		return team.Agent{}, fmt.Errorf("agent %s: %w", id, team.ErrNotFound)
	}
	a.Projects = slices.Clone(a.Projects)
	return a, nil
}

// Project implements team.Directory.
func (s *Store) Project(_ context.Context, slug string) (team.Project, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.projects[slug]
	if !ok {
		return team.Project{}, fmt.Errorf("project %s: %w", slug, team.ErrNotFound)
	}
	p.OwnerApprovalTypes = slices.Clone(p.OwnerApprovalTypes)
	return p, nil
}

// Task implements team.Tasks.
func (s *Store) Task(_ context.Context, id string) (task.Task, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tasks[id]
	if !ok {
		return task.Task{}, fmt.Errorf("task %s: %w", id, team.ErrNotFound)
	}
	return copyTask(t), nil
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

// cursor is what a ListTasks cursor encodes: the sort key of the last task
// returned and a digest of the query it belongs to.
type cursor struct {
	CreatedAt int64  `json:"c"`
	ID        string `json:"i"`
	Query     string `json:"q"`
}

// queryDigest identifies a query without its limit and cursor, so that a
// cursor is only accepted for the query that issued it.
func queryDigest(q team.TaskQuery) string {
	states := make([]string, len(q.States))
	for i, st := range q.States {
		states[i] = string(st)
	}
	slices.Sort(states)
	role := q.Role
	if role == "" {
		role = "any"
	}
	sum := sha256.Sum256([]byte(strings.Join([]string{q.Project, q.Involving, role, strings.Join(states, ",")}, "\x00")))
	return hex.EncodeToString(sum[:8])
}

// newer reports whether a sorts before b: newest first, ties broken by id (descending).
func newer(a, b task.Task) bool {
	if !a.CreatedAt.Equal(b.CreatedAt) {
		return a.CreatedAt.After(b.CreatedAt)
	}
	return a.ID > b.ID
}

// ListTasks implements team.Tasks. Involving empty keeps every task of the
// project; Role (assignee, requester, any; empty means any) says how the
// Involving agent must be involved; States empty keeps every state.
func (s *Store) ListTasks(_ context.Context, q team.TaskQuery) (team.TaskPage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch q.Role {
	case "", "any", "assignee", "requester":
	default:
		return team.TaskPage{}, fmt.Errorf("list tasks: role %q is not assignee, requester or any", q.Role)
	}
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	limit = min(limit, MaxLimit)
	digest := queryDigest(q)
	var after *task.Task
	if q.Cursor != "" {
		raw, err := base64.RawURLEncoding.DecodeString(q.Cursor)
		var c cursor
		if err == nil {
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.DisallowUnknownFields()
			err = dec.Decode(&c)
		}
		if err != nil || c.Query != digest || c.ID == "" {
			return team.TaskPage{}, fmt.Errorf("list tasks with cursor %q: %w", q.Cursor, team.ErrBadCursor)
		}
		after = &task.Task{ID: c.ID, CreatedAt: time.Unix(0, c.CreatedAt)}
	}
	var matched []task.Task
	for _, t := range s.tasks {
		if t.Project != q.Project || !involves(t, q.Involving, q.Role) {
			continue
		}
		if len(q.States) > 0 && !slices.Contains(q.States, t.State) {
			continue
		}
		if after != nil && !newer(*after, t) {
			continue
		}
		matched = append(matched, t)
	}
	slices.SortFunc(matched, func(a, b task.Task) int {
		if newer(a, b) {
			return -1
		}
		if newer(b, a) {
			return 1
		}
		return 0
	})
	page := team.TaskPage{Tasks: []task.Task{}}
	for i, t := range matched {
		if i == limit {
			last := page.Tasks[len(page.Tasks)-1]
			b, err := json.Marshal(cursor{CreatedAt: last.CreatedAt.UnixNano(), ID: last.ID, Query: digest})
			if err != nil {
				return team.TaskPage{}, fmt.Errorf("encode cursor: %w", err)
			}
			page.NextCursor = base64.RawURLEncoding.EncodeToString(b)
			break
		}
		page.Tasks = append(page.Tasks, copyTask(t))
	}
	return page, nil
}

func involves(t task.Task, agent, role string) bool {
	if agent == "" {
		return true
	}
	switch role {
	case "assignee":
		return t.Assignee == agent
	case "requester":
		return t.Requester == agent
	}
	return t.Assignee == agent || t.Requester == agent
}

// Step implements team.Steps.
func (s *Store) Step(_ context.Context, taskID, stepID string) (step.Step, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.steps[taskID][stepID]
	if !ok {
		return step.Step{}, fmt.Errorf("step %s of task %s: %w", stepID, taskID, team.ErrNotFound)
	}
	return copyStep(st), nil
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
// existing), the optional move on the task's version being PrevVersion; if
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
	return nil
}

// PutPulse implements team.Pulses: one entry per agent and project, the latest wins.
func (s *Store) PutPulse(_ context.Context, e pulse.Entry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pulses[e.Project] == nil {
		s.pulses[e.Project] = map[string]pulse.Entry{}
	}
	s.pulses[e.Project][e.AgentID] = copyPulse(e)
	return nil
}

// PutTaskPulse implements team.Pulses: PutPulse, only if the entry's task is in its project.
func (s *Store) PutTaskPulse(ctx context.Context, e pulse.Entry) error {
	id := ""
	if e.TaskID != nil {
		id = *e.TaskID
	}
	s.mu.Lock()
	t, ok := s.tasks[id]
	s.mu.Unlock()
	if !ok || t.Project != e.Project {
		return fmt.Errorf("put pulse of %s on task %s: %w", e.AgentID, id, team.ErrConflict)
	}
	return s.PutPulse(ctx, e)
}

// Pulse implements team.Pulses: the project's entries, most recently updated first.
func (s *Store) Pulse(_ context.Context, project string) ([]pulse.Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]pulse.Entry, 0, len(s.pulses[project]))
	for _, e := range s.pulses[project] {
		out = append(out, copyPulse(e))
	}
	slices.SortFunc(out, func(a, b pulse.Entry) int {
		if c := b.UpdatedAt.Compare(a.UpdatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.AgentID, b.AgentID)
	})
	return out, nil
}

// The copies below keep callers from changing stored items through shared
// slices and pointers, as a real store's round trip would.

func copyTask(t task.Task) task.Task {
	t.WaitingOn = copyPtr(t.WaitingOn)
	t.Packet.AcceptanceCriteria = slices.Clone(t.Packet.AcceptanceCriteria)
	t.Packet.Files = slices.Clone(t.Packet.Files)
	t.Packet.DependsOn = slices.Clone(t.Packet.DependsOn)
	if t.Result != nil {
		r := *t.Result
		r.Evidence = slices.Clone(r.Evidence)
		t.Result = &r
	}
	if t.LatestCheckpoint != nil {
		cp := *t.LatestCheckpoint
		cp.Decisions = slices.Clone(cp.Decisions)
		cp.FilesTouched = slices.Clone(cp.FilesTouched)
		cp.NextSteps = slices.Clone(cp.NextSteps)
		cp.OpenQuestions = slices.Clone(cp.OpenQuestions)
		t.LatestCheckpoint = &cp
	}
	return t
}

func copyEvent(e task.Event) task.Event {
	e.From = copyPtr(e.From)
	e.Note = copyPtr(e.Note)
	return e
}

func copyStep(st step.Step) step.Step {
	st.Input = bytes.Clone(st.Input)
	st.DecidedAt = copyPtr(st.DecidedAt)
	st.Amount = copyPtr(st.Amount)
	return st
}

func copyPulse(e pulse.Entry) pulse.Entry {
	e.TaskID = copyPtr(e.TaskID)
	e.Branch = copyPtr(e.Branch)
	e.LastDecision = copyPtr(e.LastDecision)
	e.Files = slices.Clone(e.Files)
	return e
}

func copyPtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// ProjectGrants implements team.Grants: the project's grants in id order.
func (s *Store) ProjectGrants(_ context.Context, project string) ([]grant.Grant, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []grant.Grant{}
	for _, g := range s.grants {
		if g.Project == project {
			out = append(out, g)
		}
	}
	slices.SortFunc(out, func(a, b grant.Grant) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// PutGrant implements team.Grants: a new grant only.
func (s *Store) PutGrant(_ context.Context, g grant.Grant) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.grants[g.ID]; ok {
		return fmt.Errorf("put grant %s: %w", g.ID, team.ErrConflict)
	}
	s.grants[g.ID] = g
	return nil
}

// UseGrant implements team.Grants: one use while the grant is live.
func (s *Store) UseGrant(_ context.Context, project, id string, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.grants[id]
	if !ok || g.Project != project {
		return fmt.Errorf("use grant %s: %w", id, team.ErrNotFound)
	}
	if !g.Live(now) {
		return fmt.Errorf("use grant %s: %w", id, team.ErrConflict)
	}
	g.Uses++
	s.grants[id] = g
	return nil
}

// RevokeGrant implements team.Grants: once.
func (s *Store) RevokeGrant(_ context.Context, project, id, by string, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.grants[id]
	if !ok || g.Project != project {
		return fmt.Errorf("revoke grant %s: %w", id, team.ErrNotFound)
	}
	if g.RevokedAt != nil {
		return fmt.Errorf("revoke grant %s: %w", id, team.ErrConflict)
	}
	g.RevokedAt, g.RevokedBy = &now, by
	s.grants[id] = g
	return nil
}

// Budget implements team.Budgets.
func (s *Store) Budget(_ context.Context, project, owner, unit string) (budget.Budget, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.budgets[project+"#"+owner+"#"+unit]
	if !ok {
		return budget.Budget{}, fmt.Errorf("budget of %s: %w", owner, team.ErrNotFound)
	}
	return b, nil
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

// AppendAudit implements team.AuditLog.
func (s *Store) AppendAudit(_ context.Context, entries ...audit.Entry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.audit = append(s.audit, entries...)
	return nil
}

// ProjectAudit implements team.AuditLog: the project's entries in time order.
func (s *Store) ProjectAudit(_ context.Context, project string) ([]audit.Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []audit.Entry{}
	for _, e := range s.audit {
		if e.Project == project {
			out = append(out, e)
		}
	}
	audit.Sort(out)
	return out, nil
}
