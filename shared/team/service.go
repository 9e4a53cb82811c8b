package team

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/domain/event"
	"github.com/useprickle/prickle/shared/domain/task"
)

// Service carries out the tools for an authenticated caller.
type Service struct {
	Store Store
	// Now is the clock; tests inject one to step through time.
	Now func() time.Time
	// NewID makes ids for tasks and steps; tests may make them predictable.
	NewID func(prefix string) string
	// Events receives what happened after it is stored (routing, results,
	// steps); notify, wake and route react to them.
	Events event.Publisher
}

// New builds a Service with the real clock, random ids and no listeners.
func New(s Store) *Service {
	return &Service{Store: s, Now: time.Now, NewID: RandomID, Events: event.Discard{}}
}

// publish sends events after their change is stored. The change stands even
// if publishing fails after the publisher's retries: the failure is logged
// for the operator (the alarm on publish errors), never turned into a
// second, conflicting answer to the agent.
func (s *Service) publish(ctx context.Context, events ...event.Event) {
	if s.Events == nil || len(events) == 0 {
		return
	}
	if err := s.Events.Publish(ctx, events...); err != nil {
		ids := make([]string, len(events))
		for i, e := range events {
			ids[i] = e.ID
		}
		slog.ErrorContext(ctx, "publish events failed", "events", ids, "error", err.Error())
	}
}

// RandomID returns prefix plus 16 random base32 characters: unguessable and URL-safe.
func RandomID(prefix string) string {
	b := make([]byte, 10)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err))
	}
	return prefix + strings.ToLower(base32.StdEncoding.EncodeToString(b))
}

// ownerOf is the owner part of an owner/agent id: the human who answers for the agent.
func ownerOf(agent string) string {
	owner, _, _ := strings.Cut(agent, "/")
	return owner
}

// now is the service clock in UTC at millisecond precision, as stored.
func (s *Service) now() time.Time {
	return s.Now().UTC().Truncate(time.Millisecond)
}

// joined refuses a project the caller does not belong to, which looks
// exactly like one that does not exist.
func (s *Service) joined(ctx context.Context, c identity.Caller, slug string) error {
	projects, err := s.memberships(ctx, c)
	if err != nil {
		return err
	}
	if !slices.Contains(projects, slug) {
		return task.Refusef("no project %s that %s belongs to", slug, c.Agent)
	}
	return nil
}

// memberships are the caller's projects. They come with the caller's token;
// a token stored without them falls back to reading the agent.
func (s *Service) memberships(ctx context.Context, c identity.Caller) ([]string, error) {
	if c.ProjectsKnown {
		return c.Projects, nil
	}
	a, err := s.Store.Agent(ctx, c.Agent)
	if err != nil {
		return nil, fmt.Errorf("load caller %s: %w", c.Agent, err)
	}
	return a.Projects, nil
}

// project reads a project's settings; a missing one is refused as if the
// caller did not belong to it.
func (s *Service) project(ctx context.Context, c identity.Caller, slug string) (Project, error) {
	p, err := s.Store.Project(ctx, slug)
	if errors.Is(err, ErrNotFound) {
		return Project{}, task.Refusef("no project %s that %s belongs to", slug, c.Agent)
	}
	if err != nil {
		return Project{}, fmt.Errorf("load project %s: %w", slug, err)
	}
	return p, nil
}

// visibleTask loads a task the caller may see: one of a project it belongs
// to. Any other task is reported as not found, so outsiders learn nothing.
func (s *Service) visibleTask(ctx context.Context, c identity.Caller, id string) (task.Task, error) {
	t, err := s.Store.Task(ctx, id)
	return t, s.visible(ctx, c, id, t, err)
}

// visible decides whether the caller may see task id, given what loading it
// returned (t, loadErr). A task that does not exist and one of a project the
// caller is not in take the same path, the same reads (the memberships are
// resolved either way) and the same refusal, so neither the answer nor the
// work behind it tells an outsider whether the id exists.
func (s *Service) visible(ctx context.Context, c identity.Caller, id string, t task.Task, loadErr error) error {
	found := loadErr == nil
	if !found && !errors.Is(loadErr, ErrNotFound) {
		return fmt.Errorf("load task %s: %w", id, loadErr)
	}
	projects, err := s.memberships(ctx, c)
	if err != nil {
		return err
	}
	if !found || !slices.Contains(projects, t.Project) {
		return task.Refusef("no task %s in a project of %s", id, c.Agent)
	}
	return nil
}

// taskProject is the settings of a visible task's project, refused as the
// task itself when the project is gone.
func (s *Service) taskProject(ctx context.Context, c identity.Caller, t task.Task) (Project, error) {
	p, err := s.project(ctx, c, t.Project)
	var refusal *task.Refusal
	if errors.As(err, &refusal) {
		return Project{}, task.Refusef("no task %s in a project of %s", t.ID, c.Agent)
	}
	return p, err
}

// writable is the run-token rule: a run token acts only on the task it was
// minted for.
func writable(c identity.Caller, id string) error {
	if c.Kind == identity.KindRun && c.TaskID != id {
		return task.Refusef("this run token is for task %s; use your agent token for task %s", c.TaskID, id)
	}
	return nil
}

// writableTask is visibleTask plus the run-token rule.
func (s *Service) writableTask(ctx context.Context, c identity.Caller, id string) (task.Task, error) {
	if err := writable(c, id); err != nil {
		return task.Task{}, err
	}
	return s.visibleTask(ctx, c, id)
}

// transition loads a task, applies a lifecycle rule and stores the move in
// one conditional write; a lost race is reported with the state that won.
// The rule gets the project's settings only when withProject is set (one
// read more).
func (s *Service) transition(ctx context.Context, c identity.Caller, id string, withProject bool, rule func(task.Task, Project, time.Time) (task.Move, error)) (task.Task, error) {
	t, err := s.writableTask(ctx, c, id)
	if err != nil {
		return task.Task{}, err
	}
	var p Project
	if withProject {
		if p, err = s.taskProject(ctx, c, t); err != nil {
			return task.Task{}, err
		}
	}
	m, err := rule(t, p, s.now())
	if err != nil {
		return task.Task{}, err
	}
	if err := s.storeMove(ctx, t, &m, "store move of task"); err != nil {
		return task.Task{}, err
	}
	s.publish(ctx, event.ForMove(m.Task, m.Event)...)
	return m.Task, nil
}

// storeMove stores m, a move of t, as t's next version and sets
// m.Task.Version; a lost race comes back as the refusal conflict words, any
// other failure wrapped in what ("store move of task").
func (s *Service) storeMove(ctx context.Context, t task.Task, m *task.Move, what string) error {
	if err := s.Store.ApplyMove(ctx, t.Version, *m); err != nil {
		if errors.Is(err, ErrConflict) {
			return s.conflict(ctx, t.ID)
		}
		return fmt.Errorf("%s %s: %w", what, t.ID, err)
	}
	m.Task.Version = t.Version + 1
	return nil
}

// conflict explains a lost race: another call moved the task first.
func (s *Service) conflict(ctx context.Context, id string) error {
	t, err := s.Store.Task(ctx, id)
	if err != nil {
		return task.Refusef("task %s was changed by another call at the same moment; read it again and retry", id)
	}
	return task.Refusef("task %s was changed by another call at the same moment and is now %s; read it again before retrying", id, t.State)
}
