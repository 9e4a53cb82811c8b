package teamtest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/team"
)

// cursor is what a ListTasks cursor encodes: the sort key of the last task
// returned and a digest of the query it belongs to.
type cursor struct {
	CreatedAt int64  `json:"c"`
	ID        string `json:"i"`
	Query     string `json:"q"`
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
	case "", task.RoleAny, task.RoleAssignee, task.RoleRequester:
	default:
		return team.TaskPage{}, fmt.Errorf("list tasks: role %q is not assignee, requester or any", q.Role)
	}
	limit := q.PageLimit()
	digest := q.Digest()
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
	case task.RoleAssignee:
		return t.Assignee == agent
	case task.RoleRequester:
		return t.Requester == agent
	}
	return t.Assignee == agent || t.Requester == agent
}
