//go:build integration

package store_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/task"
	"github.com/useprickle/prickle/shared/team"
)

var cursorPattern = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// seedTasks creates 25 tasks in website-v2 among three agents (two of them
// created in the same millisecond) and 5 in another project; it returns the
// website-v2 tasks newest first.
func seedTasks(t *testing.T, f fixture) []task.Task {
	t.Helper()
	ctx := context.Background()
	agents := []string{"ana/claude", "bo/codex", "cy/gemini"}
	states := []task.State{task.Routed, task.Accepted, task.Working, task.Verifying, task.Completed}
	var mine []task.Task
	for i := range 30 {
		project := "website-v2"
		if i%6 == 5 {
			project = "billing"
		}
		at := base.Add(time.Duration(i) * time.Minute)
		if i == 7 {
			at = base.Add(6 * time.Minute) // same instant as task 6: ties break on the id
		}
		tk := routedTask(fmt.Sprintf("task-%02d", i), project, agents[i%3], agents[(i+1)%3], at)
		tk.State = states[i%len(states)]
		if err := f.store.CreateTask(ctx, tk, created(tk)); err != nil {
			t.Fatal(err)
		}
		tk.Version = 1
		if project == "website-v2" {
			mine = append(mine, tk)
		}
	}
	slices.Reverse(mine) // created in time order, so reversed is newest first
	if len(mine) != 25 {
		t.Fatalf("seeded %d website-v2 tasks, want 25", len(mine))
	}
	return mine
}

// readAll pages through q with the given limit and returns the ids in order.
func readAll(t *testing.T, f fixture, q team.TaskQuery, limit int) []string {
	t.Helper()
	q.Limit = limit
	var ids []string
	for pages := 0; ; pages++ {
		if pages > 40 {
			t.Fatalf("more than 40 pages for %+v", q)
		}
		page, err := f.store.ListTasks(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Tasks) > limit {
			t.Fatalf("page of %d tasks, limit %d", len(page.Tasks), limit)
		}
		for _, tk := range page.Tasks {
			ids = append(ids, tk.ID)
		}
		if page.NextCursor == "" {
			return ids
		}
		if !cursorPattern.MatchString(page.NextCursor) {
			t.Fatalf("cursor %q does not match %s", page.NextCursor, cursorPattern)
		}
		q.Cursor = page.NextCursor
	}
}

func TestListTasksPagesNeverSkipOrRepeat(t *testing.T) {
	f := newFixture(t)
	all := seedTasks(t, f)
	involves := func(role, agent string) func(task.Task) bool {
		return func(tk task.Task) bool {
			switch role {
			case "assignee":
				return tk.Assignee == agent
			case "requester":
				return tk.Requester == agent
			}
			return tk.Assignee == agent || tk.Requester == agent
		}
	}
	open := []task.State{task.Routed, task.Working, task.Verifying}
	inStates := func(states []task.State, keep func(task.Task) bool) func(task.Task) bool {
		return func(tk task.Task) bool { return slices.Contains(states, tk.State) && keep(tk) }
	}
	everything := func(task.Task) bool { return true }

	cases := []struct {
		name string
		q    team.TaskQuery
		keep func(task.Task) bool
	}{
		{"whole project", team.TaskQuery{Role: "any"}, everything},
		{"any role, involving bo", team.TaskQuery{Role: "any", Involving: "bo/codex"}, involves("any", "bo/codex")},
		{"assignee bo", team.TaskQuery{Role: "assignee", Involving: "bo/codex"}, involves("assignee", "bo/codex")},
		{"requester bo", team.TaskQuery{Role: "requester", Involving: "bo/codex"}, involves("requester", "bo/codex")},
		{"whole project, open states", team.TaskQuery{Role: "any", States: open}, inStates(open, everything)},
		{"assignee cy, open states", team.TaskQuery{Role: "assignee", Involving: "cy/gemini", States: open}, inStates(open, involves("assignee", "cy/gemini"))},
		{"requester ana, completed", team.TaskQuery{Role: "requester", Involving: "ana/claude", States: []task.State{task.Completed}}, inStates([]task.State{task.Completed}, involves("requester", "ana/claude"))},
		{"nobody's tasks", team.TaskQuery{Role: "any", Involving: "zed/none"}, func(task.Task) bool { return false }},
		{"any role, involving ana, open states", team.TaskQuery{Role: "any", Involving: "ana/claude", States: open}, inStates(open, involves("any", "ana/claude"))},
		{"role left empty means any", team.TaskQuery{Involving: "cy/gemini"}, involves("any", "cy/gemini")},
	}
	for _, tc := range cases {
		var want []string
		for _, tk := range all {
			if tc.keep(tk) {
				want = append(want, tk.ID)
			}
		}
		for _, limit := range []int{1, 2, 4, 7, 25, 100} {
			t.Run(fmt.Sprintf("%s/limit %d", tc.name, limit), func(t *testing.T) {
				q := tc.q
				q.Project = "website-v2"
				got := readAll(t, f, q, limit)
				if strings.Join(got, ",") != strings.Join(want, ",") {
					t.Errorf("ids\n got %v\nwant %v", got, want)
				}
			})
		}
	}
}

func TestListTasksFirstPageIsNewestAndWhole(t *testing.T) {
	f := newFixture(t)
	all := seedTasks(t, f)
	page, err := f.store.ListTasks(context.Background(), team.TaskQuery{Project: "website-v2", Role: "any", Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Tasks) != 3 || page.NextCursor == "" {
		t.Fatalf("got %d tasks, cursor %q; want 3 and a cursor", len(page.Tasks), page.NextCursor)
	}
	for i, tk := range page.Tasks {
		if asJSON(t, tk) != asJSON(t, all[i]) || tk.Version != 1 {
			t.Errorf("task %d = %s, want %s", i, asJSON(t, tk), asJSON(t, all[i]))
		}
	}
	last, err := f.store.ListTasks(context.Background(), team.TaskQuery{Project: "website-v2", Role: "any", Limit: 25})
	if err != nil {
		t.Fatal(err)
	}
	if len(last.Tasks) != 25 || last.NextCursor != "" {
		t.Errorf("limit 25 over 25 tasks: %d tasks, cursor %q; want 25 and none", len(last.Tasks), last.NextCursor)
	}
}

func TestListTasksCursorSurvivesNewTasks(t *testing.T) {
	f := newFixture(t)
	all := seedTasks(t, f)
	ctx := context.Background()
	q := team.TaskQuery{Project: "website-v2", Role: "any", Limit: 10}
	first, err := f.store.ListTasks(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	// Newer tasks arrive between pages; the next pages go on where the first stopped.
	for i := range 3 {
		mustCreate(t, f, routedTask(fmt.Sprintf("late-%d", i), "website-v2", "ana/claude", "bo/codex", base.Add(time.Hour)))
	}
	ids := []string{}
	for _, tk := range first.Tasks {
		ids = append(ids, tk.ID)
	}
	q.Cursor = first.NextCursor
	ids = append(ids, readAll(t, f, q, 10)...)
	var want []string
	for _, tk := range all {
		want = append(want, tk.ID)
	}
	if strings.Join(ids, ",") != strings.Join(want, ",") {
		t.Errorf("ids\n got %v\nwant %v", ids, want)
	}
}

func TestListTasksRefusesBadCursor(t *testing.T) {
	f := newFixture(t)
	seedTasks(t, f)
	q := team.TaskQuery{Project: "website-v2", Role: "assignee", Involving: "bo/codex", Limit: 2}
	page, err := f.store.ListTasks(context.Background(), q)
	if err != nil || page.NextCursor == "" {
		t.Fatalf("first page: cursor %q, %v", page.NextCursor, err)
	}
	notAKey := base64.RawURLEncoding.EncodeToString([]byte("not a key"))
	otherQuery := func(change func(*team.TaskQuery)) team.TaskQuery {
		o := q
		o.Cursor = page.NextCursor
		change(&o)
		return o
	}
	for _, bad := range []team.TaskQuery{
		otherQuery(func(o *team.TaskQuery) { o.Cursor = "not base64!" }),
		otherQuery(func(o *team.TaskQuery) { o.Cursor = notAKey }),
		otherQuery(func(o *team.TaskQuery) { o.Project = "billing" }),
		otherQuery(func(o *team.TaskQuery) { o.Role = "requester" }),
		otherQuery(func(o *team.TaskQuery) { o.States = []task.State{task.Routed} }),
	} {
		if _, err := f.store.ListTasks(context.Background(), bad); !errors.Is(err, team.ErrBadCursor) {
			t.Errorf("ListTasks(%+v): err = %v, want team.ErrBadCursor", bad, err)
		}
	}
	// The same query with another limit keeps its cursor.
	same := otherQuery(func(o *team.TaskQuery) { o.Limit = 5 })
	if _, err := f.store.ListTasks(context.Background(), same); err != nil {
		t.Errorf("same query, other limit: %v", err)
	}
}

// The project's requested tasks come from the sparse by_requested index:
// a task is in it exactly while it waits in requested.
func TestRequestedTasksLeaveTheIndexWhenRouted(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	var requested []task.Task
	for i, project := range []string{"website-v2", "website-v2", "mobile", "website-v2"} {
		tk := routedTask(fmt.Sprintf("r%d", i), project, "ana/claude", "bo/codex", base.Add(time.Duration(i)*time.Second))
		tk.State = task.Requested
		mustCreate(t, f, tk)
		if project == "website-v2" {
			requested = append(requested, tk)
		}
	}
	mustCreate(t, f, routedTask("routed", "website-v2", "ana/claude", "bo/codex", base.Add(time.Hour)))

	ids := func() []string {
		page, err := f.store.ListTasks(ctx, team.TaskQuery{Project: "website-v2", Role: "any", States: []task.State{task.Requested}, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tk := range page.Tasks {
			if tk.State != task.Requested {
				t.Errorf("%s is %s in the requested index", tk.ID, tk.State)
			}
			out = append(out, tk.ID)
		}
		return out
	}
	if got := ids(); !slices.Equal(got, []string{"r3", "r1", "r0"}) {
		t.Fatalf("requested tasks of website-v2 = %v, want r3 r1 r0 (newest first, no other project, no routed task)", got)
	}
	m, err := task.Route(requested[1], base.Add(2*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.store.ApplyMove(ctx, 1, m); err != nil {
		t.Fatal(err)
	}
	if got := ids(); !slices.Equal(got, []string{"r3", "r0"}) {
		t.Errorf("after routing r1: requested = %v, want r3 r0", got)
	}
}

// A task an agent handed to itself is in both of its indexes, and is listed once.
func TestListTasksInvolvingListsASelfAssignedTaskOnce(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for i, pair := range [][2]string{{"ana/claude", "ana/claude"}, {"ana/claude", "bo/codex"}, {"bo/codex", "ana/claude"}, {"bo/codex", "cy/gemini"}} {
		mustCreate(t, f, routedTask(fmt.Sprintf("s%d", i), "website-v2", pair[0], pair[1], base.Add(time.Duration(i)*time.Minute)))
	}
	for _, limit := range []int{1, 2, 3, 100} {
		got := readAll(t, f, team.TaskQuery{Project: "website-v2", Role: "any", Involving: "ana/claude"}, limit)
		if !slices.Equal(got, []string{"s2", "s1", "s0"}) {
			t.Errorf("limit %d: %v, want s2 s1 s0", limit, got)
		}
	}
	if _, err := f.store.ListTasks(ctx, team.TaskQuery{Project: "website-v2", Role: "any", Involving: "ana/claude", Cursor: "bm9wZQ"}); !errors.Is(err, team.ErrBadCursor) {
		t.Errorf("foreign cursor: err = %v, want ErrBadCursor", err)
	}
}
