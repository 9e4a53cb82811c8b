//go:build integration

package web_test

import (
	"context"
	"testing"

	"github.com/useprickle/prickle/shared/aws/store/storetest"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/admin"
)

func TestApprovalFlowsOnTheRealStore(t *testing.T) {
	runFlows(t, realStore)
}

// realStore is the DynamoDB store over fresh tables (from template.yaml) on
// the emulator, seeded with the flows' project, owners and agents.
func realStore(t *testing.T) roomBackend {
	t.Helper()
	ctx := context.Background()
	st := storetest.New(t).Store
	adm := admin.New(st)
	if err := adm.CreateProject(ctx, project); err != nil {
		t.Fatal(err)
	}
	for _, o := range []team.Owner{{Name: "alice", Email: "alice@example.com", SlackChannel: "C0ALICE"}, {Name: "bob", Email: "bob@example.com"}} {
		if err := adm.CreateOwner(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	for _, a := range []team.Agent{writer, review} {
		if err := adm.CreateAgent(ctx, a.ID, a.Projects); err != nil {
			t.Fatal(err)
		}
	}
	return st
}
