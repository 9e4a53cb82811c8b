package team

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/domain/pulse"
	"github.com/useprickle/prickle/shared/domain/task"
)

// ErrBadCursor is what a store returns for a cursor it did not issue.
var ErrBadCursor = errors.New("bad cursor")

// ReadRoom returns Team Pulse of a project and the tasks that involve the caller, newest first.
func (s *Service) ReadRoom(ctx context.Context, c identity.Caller, in ReadRoomInput) (ReadRoomOutput, error) {
	if err := s.joined(ctx, c, in.Project); err != nil {
		return ReadRoomOutput{}, err
	}
	if in.Role == "" {
		in.Role = task.RoleAny
	}
	if in.Limit == 0 {
		in.Limit = DefaultTaskLimit
	}
	// Team Pulse and the caller's tasks are read at once.
	var entries []pulse.Entry
	var pulseErr error
	var wg sync.WaitGroup
	wg.Go(func() { entries, pulseErr = s.Store.Pulse(ctx, in.Project) })
	page, err := s.Store.ListTasks(ctx, TaskQuery{
		Project: in.Project, Involving: c.Agent, Role: in.Role,
		States: in.States, Limit: in.Limit, Cursor: in.Cursor,
	})
	wg.Wait()
	if pulseErr != nil {
		return ReadRoomOutput{}, fmt.Errorf("read pulse of %s: %w", in.Project, pulseErr)
	}
	if errors.Is(err, ErrBadCursor) {
		return ReadRoomOutput{}, task.Refusef("cursor %q is not one read_room returned for this query; start again without a cursor", in.Cursor)
	}
	if err != nil {
		return ReadRoomOutput{}, fmt.Errorf("list tasks of %s: %w", in.Project, err)
	}
	out := ReadRoomOutput{Project: in.Project, Pulse: entries, Tasks: page.Tasks}
	if out.Pulse == nil {
		out.Pulse = []pulse.Entry{}
	}
	if out.Tasks == nil {
		out.Tasks = []task.Task{}
	}
	if page.NextCursor != "" {
		out.NextCursor = &page.NextCursor
	}
	return out, nil
}

// GetTask returns one task of the caller's projects with its history.
func (s *Service) GetTask(ctx context.Context, c identity.Caller, in GetTaskInput) (GetTaskOutput, error) {
	// The task and its history share a partition: one read brings both.
	t, h, err := s.Store.TaskWithHistory(ctx, in.TaskID)
	if err := s.visible(ctx, c, in.TaskID, t, err); err != nil {
		return GetTaskOutput{}, err
	}
	if h == nil {
		h = []task.Event{}
	}
	return GetTaskOutput{Task: t, History: h}, nil
}
