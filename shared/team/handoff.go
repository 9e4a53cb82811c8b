package team

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/domain/event"
	"github.com/useprickle/prickle/shared/domain/task"
)

// HandOffTask creates a task for a teammate; the caller is its requester.
// A task whose dependencies are not all completed waits in requested.
func (s *Service) HandOffTask(ctx context.Context, c identity.Caller, in HandOffInput) (TaskOutput, error) {
	return s.handOff(ctx, c, in, nil)
}

// handOff is HandOffTask; by, when set, says who did it for the caller in
// the first history line (an owner on the board, see HandOffOnBoard).
func (s *Service) handOff(ctx context.Context, c identity.Caller, in HandOffInput, by *OwnerAct) (TaskOutput, error) {
	if err := s.joined(ctx, c, in.Project); err != nil {
		return TaskOutput{}, err
	}
	if err := task.CheckHandOff(c.Agent, in.Assignee); err != nil {
		return TaskOutput{}, err
	}
	assignee, err := s.Store.Agent(ctx, in.Assignee)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return TaskOutput{}, fmt.Errorf("load assignee %s: %w", in.Assignee, err)
	}
	if err != nil || !slices.Contains(assignee.Projects, in.Project) {
		return TaskOutput{}, task.Refusef("assignee %s is not an agent of project %s", in.Assignee, in.Project)
	}
	ready, err := s.dependenciesDone(ctx, in.Project, in.Packet.DependsOn)
	if err != nil {
		return TaskOutput{}, err
	}
	now := s.now()
	packet := in.Packet // files and depends_on are optional in the call, lists in the task
	packet.Files, packet.DependsOn = orEmpty(packet.Files), orEmpty(packet.DependsOn)
	t := task.Task{
		ID: s.NewID("tsk_"), Project: in.Project, State: task.Requested,
		Requester: c.Agent, Assignee: in.Assignee, Packet: packet,
		CreatedAt: now, UpdatedAt: now, Version: 1,
	}
	if ready {
		t.State = task.Routed
	}
	first := task.Event{At: now, By: c.Agent, Action: task.ActionHandOff, To: t.State}
	if by != nil {
		by.mark(&first, "")
	}
	if err := s.Store.CreateTask(ctx, t, first); err != nil {
		return TaskOutput{}, fmt.Errorf("store new task: %w", err)
	}
	if by != nil {
		s.audit(ctx, by.entry(t, first, fmt.Sprintf("as %s: a task for %s (%s): %s", c.Agent, t.Assignee, t.Packet.DeliverableType, t.Packet.Task)))
	}
	s.publish(ctx, event.ForMove(t, first)...)
	if routed, err := s.routeIfReady(ctx, t); err == nil {
		// A dependency may have completed between the check and the write.
		t = routed
	}
	return TaskOutput{Task: t}, nil
}

// dependenciesDone checks that every dependency is a task of the project,
// and reports whether all of them are completed.
func (s *Service) dependenciesDone(ctx context.Context, project string, ids []string) (bool, error) {
	done := true
	for _, id := range ids {
		d, err := s.Store.Task(ctx, id)
		if errors.Is(err, ErrNotFound) || (err == nil && d.Project != project) {
			return false, task.Refusef("depends_on names %s, which is not a task of project %s", id, project)
		}
		if err != nil {
			return false, fmt.Errorf("load dependency %s: %w", id, err)
		}
		if d.State != task.Completed {
			done = false
		}
	}
	return done, nil
}

// routeIfReady routes a requested task whose dependencies have all completed.
func (s *Service) routeIfReady(ctx context.Context, t task.Task) (task.Task, error) {
	if t.State != task.Requested {
		return t, nil
	}
	ready, err := s.dependenciesDone(ctx, t.Project, t.Packet.DependsOn)
	if err != nil || !ready {
		return t, err
	}
	m, err := task.Route(t, s.now())
	if err != nil {
		return t, err
	}
	if err := s.Store.ApplyMove(ctx, t.Version, m); err != nil {
		return t, fmt.Errorf("route task %s: %w", t.ID, err)
	}
	m.Task.Version = t.Version + 1
	s.publish(ctx, event.ForMove(m.Task, m.Event)...)
	return m.Task, nil
}

// RouteDependents routes the requested tasks of a project that were waiting
// on a task that just completed. It is what the route function runs on Task Completed.
func (s *Service) RouteDependents(ctx context.Context, project, completedID string) error {
	cursor := ""
	for {
		page, err := s.Store.ListTasks(ctx, TaskQuery{Project: project, Role: task.RoleAny, States: []task.State{task.Requested}, Limit: MaxTaskLimit, Cursor: cursor})
		if err != nil {
			return fmt.Errorf("list requested tasks of %s: %w", project, err)
		}
		for _, t := range page.Tasks {
			if !slices.Contains(t.Packet.DependsOn, completedID) {
				continue
			}
			if _, err := s.routeIfReady(ctx, t); err != nil && !errors.Is(err, ErrConflict) {
				return err
			}
		}
		if page.NextCursor == "" {
			return nil
		}
		cursor = page.NextCursor
	}
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
