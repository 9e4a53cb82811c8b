//go:build integration

package main

import (
	"context"
	"strings"
	"testing"

	"github.com/useprickle/prickle/shared/aws/store/storetest"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/admin"
)

// TestSetSlackUser: set-slack-user records an owner's Slack member id and
// keeps the rest of the record; anything not shaped like a member id (a
// channel id or name above all: sign-in links go to it as a DM) is refused
// and changes nothing, and so is an unknown owner.
func TestSetSlackUser(t *testing.T) {
	ctx := context.Background()
	fx := storetest.New(t)
	alice := team.Owner{Name: "alice", Email: "alice@example.com", SlackChannel: "C0ALICE"}
	if err := admin.New(fx.Store).CreateOwner(ctx, alice); err != nil {
		t.Fatal(err)
	}
	deployedTables(t, fx)
	stored := func() team.Owner {
		t.Helper()
		o, err := fx.Store.Owner(ctx, "alice")
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	for _, bad := range []string{"C0ALICE", "#alice-agents", "G0PRIVATE", "u0alice", "U0ALICE x", "U"} {
		if _, err := run(ctx, "set-slack-user", []string{"--owner", "alice", "--slack-user", bad}); err == nil || !strings.Contains(err.Error(), "not a Slack member id") {
			t.Errorf("set-slack-user %q: %v, want refused", bad, err)
		}
		if _, err := run(ctx, "create-owner", []string{"--name", "alice", "--slack-user", bad}); err == nil {
			t.Errorf("create-owner --slack-user %q succeeded", bad)
		}
	}
	if got := stored(); got != alice {
		t.Fatalf("after refused ids the owner is %+v, want %+v", got, alice)
	}
	if _, err := run(ctx, "set-slack-user", []string{"--owner", "zed", "--slack-user", "U0ZED"}); err == nil {
		t.Error("set-slack-user on an unknown owner succeeded")
	}
	for _, id := range []string{"U0ALICE", "W0GRID"} {
		if _, err := run(ctx, "set-slack-user", []string{"--owner", "alice", "--slack-user", id}); err != nil {
			t.Fatal(err)
		}
		want := alice
		want.SlackUserID = id
		if got := stored(); got != want {
			t.Errorf("after set-slack-user %s the owner is %+v, want %+v", id, got, want)
		}
	}
}
