//go:build integration

package slack_test

import (
	"context"
	"testing"

	"github.com/useprickle/prickle/shared/aws/store/storetest"
	"github.com/useprickle/prickle/shared/team/admin"
)

// TestFlowsOnTheRealStore runs every flow with the DynamoDB store over fresh
// tables (from template.yaml) on the emulator: owners' Slack user ids, the
// steps and tasks the decisions write, notify's ledger and the replay markers.
func TestFlowsOnTheRealStore(t *testing.T) {
	runFlows(t, func(t *testing.T) backend {
		t.Helper()
		ctx := context.Background()
		st := storetest.New(t).Store
		adm := admin.New(st)
		if err := adm.CreateProject(ctx, project); err != nil {
			t.Fatal(err)
		}
		for _, o := range owners {
			if err := adm.CreateOwner(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
		for _, a := range []string{writer.ID, review.ID} {
			if err := adm.CreateAgent(ctx, a, []string{"website-v2"}); err != nil {
				t.Fatal(err)
			}
		}
		return backend{store: st, owners: st, ledger: st, replays: st}
	})
}
