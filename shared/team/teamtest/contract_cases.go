package teamtest

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/team"
)

// The cases of RunContract, each on an empty store.

func defaultLimitNewestFirst(t *testing.T, s team.Store) {
	for i := range 25 {
		create(t, s, RoutedTask(fmt.Sprintf("tsk_%02d", i), "p", "a/x", "b/y", contractBase.Add(time.Duration(i/2)*time.Minute)))
	}
	create(t, s, RoutedTask("tsk_other", "q", "a/x", "b/y", contractBase))

	page := list(t, s, team.TaskQuery{Project: "p"})
	if len(page.Tasks) != DefaultLimit || page.NextCursor == "" {
		t.Errorf("no limit: %d tasks, cursor %q; want %d and a cursor", len(page.Tasks), page.NextCursor, DefaultLimit)
	}
	if page.Tasks[0].ID != "tsk_24" {
		t.Errorf("first task %s, want the newest, tsk_24", page.Tasks[0].ID)
	}
	seen := map[string]bool{}
	q := team.TaskQuery{Project: "p", Involving: "b/y", Role: "assignee", Limit: 3}
	for {
		page := list(t, s, q)
		for _, tk := range page.Tasks {
			if seen[tk.ID] {
				t.Fatalf("%s listed twice", tk.ID)
			}
			seen[tk.ID] = true
		}
		if page.NextCursor == "" {
			break
		}
		q.Cursor = page.NextCursor
	}
	if len(seen) != 25 || seen["tsk_other"] {
		t.Errorf("paged through %d tasks (other project: %v), want the 25 of p", len(seen), seen["tsk_other"])
	}
	for _, bad := range []team.TaskQuery{
		{Project: "p", Cursor: "%%%"},
		{Project: "p", Cursor: "e30"}, // base64 of {}
		{Project: "q", Cursor: page.NextCursor},
		{Project: "p", States: []task.State{task.Routed}, Cursor: page.NextCursor},
	} {
		wantBadCursor(t, s, bad)
	}
}

func capsTheLimit(t *testing.T, s team.Store) {
	for i := range MaxLimit + 1 {
		create(t, s, RoutedTask(fmt.Sprintf("tsk_%03d", i), "p", "a/x", "b/y", contractBase.Add(time.Duration(i)*time.Second)))
	}
	page := list(t, s, team.TaskQuery{Project: "p", Limit: 1000})
	if len(page.Tasks) != MaxLimit || page.NextCursor == "" {
		t.Errorf("limit 1000: %d tasks, cursor %q; want %d and a cursor", len(page.Tasks), page.NextCursor, MaxLimit)
	}
}

func pagesNeverSkipOrRepeat(t *testing.T, s team.Store) {
	all := seedTasks(t, s)
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
				got := readAll(t, s, q, limit)
				if strings.Join(got, ",") != strings.Join(want, ",") {
					t.Errorf("ids\n got %v\nwant %v", got, want)
				}
			})
		}
	}
}

func firstPageIsNewestAndWhole(t *testing.T, s team.Store) {
	all := seedTasks(t, s)
	page := list(t, s, team.TaskQuery{Project: "website-v2", Role: "any", Limit: 3})
	if len(page.Tasks) != 3 || page.NextCursor == "" {
		t.Fatalf("got %d tasks, cursor %q; want 3 and a cursor", len(page.Tasks), page.NextCursor)
	}
	for i, tk := range page.Tasks {
		if asJSON(t, tk) != asJSON(t, all[i]) || tk.Version != 1 {
			t.Errorf("task %d = %s, want %s", i, asJSON(t, tk), asJSON(t, all[i]))
		}
	}
	last := list(t, s, team.TaskQuery{Project: "website-v2", Role: "any", Limit: 25})
	if len(last.Tasks) != 25 || last.NextCursor != "" {
		t.Errorf("limit 25 over 25 tasks: %d tasks, cursor %q; want 25 and none", len(last.Tasks), last.NextCursor)
	}
}

func cursorSurvivesNewTasks(t *testing.T, s team.Store) {
	all := seedTasks(t, s)
	q := team.TaskQuery{Project: "website-v2", Role: "any", Limit: 10}
	first := list(t, s, q)
	// Newer tasks arrive between pages; the next pages go on where the first stopped.
	for i := range 3 {
		create(t, s, RoutedTask(fmt.Sprintf("late-%d", i), "website-v2", "ana/claude", "bo/codex", contractBase.Add(time.Hour)))
	}
	ids := []string{}
	for _, tk := range first.Tasks {
		ids = append(ids, tk.ID)
	}
	q.Cursor = first.NextCursor
	ids = append(ids, readAll(t, s, q, 10)...)
	var want []string
	for _, tk := range all {
		want = append(want, tk.ID)
	}
	if strings.Join(ids, ",") != strings.Join(want, ",") {
		t.Errorf("ids\n got %v\nwant %v", ids, want)
	}
}

func refusesBadCursor(t *testing.T, s team.Store) {
	seedTasks(t, s)
	q := team.TaskQuery{Project: "website-v2", Role: "assignee", Involving: "bo/codex", Limit: 2}
	page := list(t, s, q)
	if page.NextCursor == "" {
		t.Fatalf("first page: no cursor")
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
		wantBadCursor(t, s, bad)
	}
	// The same query with another limit keeps its cursor.
	same := otherQuery(func(o *team.TaskQuery) { o.Limit = 5 })
	if _, err := s.ListTasks(context.Background(), same); err != nil {
		t.Errorf("same query, other limit: %v", err)
	}
}

// A project's requested tasks are listed exactly while they wait in
// requested (the real store reads them from its sparse by_requested index).
func requestedTasksLeaveWhenRouted(t *testing.T, s team.Store) {
	ctx := context.Background()
	var requested []task.Task
	for i, project := range []string{"website-v2", "website-v2", "mobile", "website-v2"} {
		tk := RoutedTask(fmt.Sprintf("r%d", i), project, "ana/claude", "bo/codex", contractBase.Add(time.Duration(i)*time.Second))
		tk.State = task.Requested
		create(t, s, tk)
		if project == "website-v2" {
			requested = append(requested, tk)
		}
	}
	create(t, s, RoutedTask("routed", "website-v2", "ana/claude", "bo/codex", contractBase.Add(time.Hour)))

	ids := func() []string {
		var out []string
		for _, tk := range list(t, s, team.TaskQuery{Project: "website-v2", Role: "any", States: []task.State{task.Requested}, Limit: 100}).Tasks {
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
	m, err := task.Route(requested[1], contractBase.Add(2*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ApplyMove(ctx, 1, m); err != nil {
		t.Fatal(err)
	}
	if got := ids(); !slices.Equal(got, []string{"r3", "r0"}) {
		t.Errorf("after routing r1: requested = %v, want r3 r0", got)
	}
}

// A task an agent handed to itself is in both of its indexes, and is listed once.
func selfAssignedListedOnce(t *testing.T, s team.Store) {
	for i, pair := range [][2]string{{"ana/claude", "ana/claude"}, {"ana/claude", "bo/codex"}, {"bo/codex", "ana/claude"}, {"bo/codex", "cy/gemini"}} {
		create(t, s, RoutedTask(fmt.Sprintf("s%d", i), "website-v2", pair[0], pair[1], contractBase.Add(time.Duration(i)*time.Minute)))
	}
	for _, limit := range []int{1, 2, 3, 100} {
		got := readAll(t, s, team.TaskQuery{Project: "website-v2", Role: "any", Involving: "ana/claude"}, limit)
		if !slices.Equal(got, []string{"s2", "s1", "s0"}) {
			t.Errorf("limit %d: %v, want s2 s1 s0", limit, got)
		}
	}
	wantBadCursor(t, s, team.TaskQuery{Project: "website-v2", Role: "any", Involving: "ana/claude", Cursor: "bm9wZQ"})
}
