//go:build integration

package web_test

import (
	"context"
	"testing"

	"github.com/useprickle/prickle/shared/aws/store"
	"github.com/useprickle/prickle/shared/aws/store/storetest"
	"github.com/useprickle/prickle/shared/team/admin"
)

func TestRoomOnTheRealStore(t *testing.T) {
	runRoom(t, realRoom)
}

// realRoom is the DynamoDB store over fresh tables (from template.yaml) on
// the emulator, with the room's projects, owners and agents.
func realRoom(t *testing.T) roomBackend {
	t.Helper()
	ctx := context.Background()
	st := storetest.New(t).Store
	adm := admin.New(st)
	for _, p := range roomProjects {
		if err := adm.CreateProject(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range roomOwners {
		if err := adm.CreateOwner(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	for _, a := range roomAgents {
		if err := adm.CreateAgent(ctx, a.ID, a.Projects); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

func TestOwnersOnTheRealStore(t *testing.T) {
	runOwners(t, realRoom)
}

func TestWhoMayDecideOnTheRealStore(t *testing.T) {
	runWhoMayDecide(t, realRoom)
}

func TestChannelReaderOnTheRealStore(t *testing.T) {
	runChannelReader(t, realRoom)
}

func TestEditThenApproveOnTheRealStore(t *testing.T) {
	runEditThenApprove(t, realRoom)
}

func TestBoardTasksOnTheRealStore(t *testing.T) {
	runBoardTasks(t, func(t *testing.T) roomBackend {
		st := realRoom(t)
		if err := admin.New(st.(*store.Store)).CreateAgent(context.Background(), builder.ID, builder.Projects); err != nil {
			t.Fatal(err)
		}
		return st
	})
}
