package teamtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/team"
)

// RunContract runs the ListTasks contract (newest first, pages that never
// skip or repeat a task, bounded limits, cursors refused for any other
// query) against the stores newStore makes, each test on an empty store:
// the same suite holds the fake (this package) and the DynamoDB store on
// the emulator to one behaviour.
func RunContract(t *testing.T, newStore func(t *testing.T) team.Store) {
	for _, c := range []struct {
		name string
		run  func(*testing.T, team.Store)
	}{
		{"DefaultLimitNewestFirst", defaultLimitNewestFirst},
		{"CapsTheLimit", capsTheLimit},
		{"PagesNeverSkipOrRepeat", pagesNeverSkipOrRepeat},
		{"FirstPageIsNewestAndWhole", firstPageIsNewestAndWhole},
		{"CursorSurvivesNewTasks", cursorSurvivesNewTasks},
		{"RefusesBadCursor", refusesBadCursor},
		{"RequestedTasksLeaveWhenRouted", requestedTasksLeaveWhenRouted},
		{"InvolvingListsASelfAssignedTaskOnce", selfAssignedListedOnce},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, newStore(t)) })
	}
}

// contractBase is the creation time of the first task of the contract.
var contractBase = time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)

var cursorPattern = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// RoutedTask is a task as hand_off_task would create it, the contract's and the store tests' sample.
func RoutedTask(id, project, requester, assignee string, created time.Time) task.Task {
	return task.Task{
		ID: id, Project: project, State: task.Routed, Requester: requester, Assignee: assignee,
		Packet: task.Packet{
			Task: "Write the " + id + " page", DeliverableType: "code",
			AcceptanceCriteria: []string{"tests pass", "page renders"},
			Context:            "see the design doc", Files: []string{"web/" + id + ".go"}, DependsOn: []string{},
		},
		CreatedAt: created, UpdatedAt: created,
	}
}

func create(t *testing.T, s team.Store, tk task.Task) {
	t.Helper()
	if err := s.CreateTask(context.Background(), tk, task.Event{At: tk.CreatedAt, By: tk.Requester, Action: "hand_off", To: tk.State}); err != nil {
		t.Fatalf("create %s: %v", tk.ID, err)
	}
}

func list(t *testing.T, s team.Store, q team.TaskQuery) team.TaskPage {
	t.Helper()
	page, err := s.ListTasks(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	return page
}

// seedTasks creates 25 tasks in website-v2 among three agents (two of them
// created in the same millisecond) and 5 in another project; it returns the
// website-v2 tasks newest first.
func seedTasks(t *testing.T, s team.Store) []task.Task {
	t.Helper()
	agents := []string{"ana/claude", "bo/codex", "cy/gemini"}
	states := []task.State{task.Routed, task.Accepted, task.Working, task.Verifying, task.Completed}
	var mine []task.Task
	for i := range 30 {
		project := "website-v2"
		if i%6 == 5 {
			project = "billing"
		}
		at := contractBase.Add(time.Duration(i) * time.Minute)
		if i == 7 {
			at = contractBase.Add(6 * time.Minute) // same instant as task 6: ties break on the id
		}
		tk := RoutedTask(fmt.Sprintf("task-%02d", i), project, agents[i%3], agents[(i+1)%3], at)
		tk.State = states[i%len(states)]
		create(t, s, tk)
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
func readAll(t *testing.T, s team.Store, q team.TaskQuery, limit int) []string {
	t.Helper()
	q.Limit = limit
	var ids []string
	for pages := 0; ; pages++ {
		if pages > 40 {
			t.Fatalf("more than 40 pages for %+v", q)
		}
		page := list(t, s, q)
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

func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func wantBadCursor(t *testing.T, s team.Store, bad team.TaskQuery) {
	t.Helper()
	if _, err := s.ListTasks(context.Background(), bad); !errors.Is(err, team.ErrBadCursor) {
		t.Errorf("ListTasks(%+v): err = %v, want team.ErrBadCursor", bad, err)
	}
}
