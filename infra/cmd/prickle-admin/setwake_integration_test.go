//go:build integration

package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/useprickle/prickle/shared/aws/store/storetest"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/admin"
)

// TestSetWakePull: set-wake --pull removes an agent's webhook (so its
// wake-ups are stored for pull), against the configured tables and with
// --local against the tables local.json names; a webhook can be set again.
func TestSetWakePull(t *testing.T) {
	ctx := context.Background()
	fx := storetest.New(t)
	adm := admin.New(fx.Store)
	if err := adm.CreateProject(ctx, team.Project{Slug: "website-v2", Name: "Website v2"}); err != nil {
		t.Fatal(err)
	}
	if err := adm.CreateOwner(ctx, team.Owner{Name: "alice"}); err != nil {
		t.Fatal(err)
	}
	if err := adm.CreateAgent(ctx, "alice/writer", []string{"website-v2"}); err != nil {
		t.Fatal(err)
	}
	hasHook := func() bool {
		t.Helper()
		_, err := fx.Store.WakeHook(ctx, "alice/writer")
		if err != nil && !errors.Is(err, team.ErrNotFound) {
			t.Fatal(err)
		}
		return err == nil
	}
	setHook := func(args ...string) {
		t.Helper()
		if _, err := run(ctx, "set-wake", append(args, "--agent", "alice/writer", "--url", "http://127.0.0.1:9/dev/wake/alice/writer")); err != nil {
			t.Fatal(err)
		}
		if !hasHook() {
			t.Fatal("set-wake --url registered no hook")
		}
	}

	// Deployed: the tables come from the environment.
	deployedTables(t, fx)
	setHook()
	out, err := run(ctx, "set-wake", []string{"--agent", "alice/writer", "--pull"})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(out); string(b) != `{"agent":"alice/writer","mode":"pull"}` {
		t.Errorf("set-wake --pull printed %s", b)
	}
	if hasHook() {
		t.Fatal("set-wake --pull left the webhook")
	}
	if _, err := run(ctx, "set-wake", []string{"--agent", "alice/writer", "--pull"}); err != nil {
		t.Errorf("set-wake --pull on an agent already in pull mode: %v", err)
	}

	// --local: the tables come from local.json.
	dir := t.TempDir()
	local, _ := json.Marshal(map[string]any{"dynamodb_endpoint": os.Getenv(storetest.EndpointEnv), "tables": map[string]string{
		"TasksTable": fx.Tables.Tasks, "StepsTable": fx.Tables.Steps, "PulseTable": fx.Tables.Pulse, "DirectoryTable": fx.Tables.Directory, "WakeupsTable": fx.Tables.Wakeups,
	}})
	if err := os.WriteFile(filepath.Join(dir, "local.json"), local, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PRICKLE_STATE_DIR", dir)
	t.Setenv("DIRECTORY_TABLE", "no-such-table")
	setHook("--local")
	if _, err := run(ctx, "set-wake", []string{"--local", "--agent", "alice/writer", "--pull"}); err != nil {
		t.Fatal(err)
	}
	if hasHook() {
		t.Fatal("set-wake --local --pull left the webhook")
	}

	for _, bad := range [][]string{
		{"--local", "--agent", "zed/ghost", "--pull"},
		{"--local", "--agent", "alice/writer", "--pull", "--url", "https://runner.example.com/prickle"},
		{"--local", "--pull"},
	} {
		if _, err := run(ctx, "set-wake", bad); err == nil {
			t.Errorf("set-wake %s succeeded", strings.Join(bad, " "))
		}
	}
}
