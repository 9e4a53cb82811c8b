//go:build integration

package wakeup_test

import (
	"context"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/aws/store"
	"github.com/useprickle/prickle/shared/aws/store/storetest"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/admin"
)

func teamProject() team.Project { return team.Project{Slug: "website-v2", Name: "Website v2"} }

// mustOf fails t on an error.
func mustOf(t *testing.T) func(error) {
	return func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
}

// routedTask is a store on the emulator with ana/claude and bo/codex in
// website-v2, and task id routed from ana to bo.
func routedTask(t *testing.T, id string) (*store.Store, *admin.Admin, task.Task) {
	t.Helper()
	st := storetest.New(t).Store
	ctx := context.Background()
	adm := admin.New(st)
	must := mustOf(t)
	must(adm.CreateProject(ctx, teamProject()))
	must(adm.CreateOwner(ctx, team.Owner{Name: "ana"}))
	must(adm.CreateOwner(ctx, team.Owner{Name: "bo"}))
	must(adm.CreateAgent(ctx, "ana/claude", []string{"website-v2"}))
	must(adm.CreateAgent(ctx, "bo/codex", []string{"website-v2"}))
	at := time.Now().UTC().Truncate(time.Millisecond)
	tk := task.Task{ID: id, Project: "website-v2", State: task.Routed, Requester: "ana/claude", Assignee: "bo/codex",
		Packet:    task.Packet{Task: "x", DeliverableType: "code", AcceptanceCriteria: []string{"y"}, Files: []string{}, DependsOn: []string{}},
		CreatedAt: at, UpdatedAt: at, Version: 1}
	must(st.CreateTask(ctx, tk, task.Event{At: at, By: "ana/claude", Action: "hand_off", To: task.Routed}))
	return st, adm, tk
}
