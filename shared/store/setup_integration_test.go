//go:build integration

package store_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/useprickle/prickle/infra/stack"
	"github.com/useprickle/prickle/shared/store"
	"github.com/useprickle/prickle/shared/task"
)

// endpointEnv names the DynamoDB endpoint (the moto launcher) these tests use.
const endpointEnv = "PRICKLE_DYNAMODB_ENDPOINT"

// fixture is a store over fresh tables of its own, so tests are independent.
type fixture struct {
	store  *store.Store
	client *dynamodb.Client
	tables store.Tables
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	endpoint := os.Getenv(endpointEnv)
	if endpoint == "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not set, and CI is: integration tests must run in CI. Start the emulator (.venv/bin/python infra/moto/launcher.py --port 4599) and set %s=http://127.0.0.1:4599", endpointEnv, endpointEnv)
		}
		t.Skipf("SKIPPED: %s is not set. Start the emulator (.venv/bin/python infra/moto/launcher.py --port 4599) and set %s=http://127.0.0.1:4599 to run this test", endpointEnv, endpointEnv)
	}
	ctx := context.Background()
	client, err := store.NewClient(ctx, endpoint)
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := stack.LoadTemplate("../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	specs, err := tpl.Tables(map[string]string{"Stage": uniqueStage(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := stack.CreateTables(ctx, client, specs); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, s := range specs {
			if _, err := client.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(s.Name())}); err != nil {
				t.Errorf("delete %s: %v", s.Name(), err)
			}
		}
	})
	names := map[string]string{}
	for _, s := range specs {
		names[s.LogicalID] = s.Name()
	}
	tables := store.Tables{Tasks: names["TasksTable"], Steps: names["StepsTable"], Pulse: names["PulseTable"], Directory: names["DirectoryTable"]}
	return fixture{store: store.New(client, tables), client: client, tables: tables}
}

var notStageChars = regexp.MustCompile(`[^a-z0-9]+`)

// uniqueStage makes a Stage parameter from the test's name and a random suffix.
func uniqueStage(t *testing.T) string {
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	name := notStageChars.ReplaceAllString(strings.ToLower(t.Name()), "-")
	return "it-" + strings.Trim(name, "-") + "-" + hex.EncodeToString(b)
}

// base is the creation time of the first sample task.
var base = time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)

// routedTask is a task as hand_off_task would create it.
func routedTask(id, project, requester, assignee string, created time.Time) task.Task {
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

func created(t task.Task) task.Event {
	return task.Event{At: t.CreatedAt, By: t.Requester, Action: "hand_off", To: t.State}
}

func mustCreate(t *testing.T, f fixture, tk task.Task) {
	t.Helper()
	if err := f.store.CreateTask(context.Background(), tk, created(tk)); err != nil {
		t.Fatalf("create %s: %v", tk.ID, err)
	}
}
