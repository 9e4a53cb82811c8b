//go:build integration

package web_test

import (
	"context"
	"os"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/useprickle/prickle/infra/stack"
	"github.com/useprickle/prickle/shared/admin"
	"github.com/useprickle/prickle/shared/store"
)

func TestRoomOnTheRealStore(t *testing.T) {
	runRoom(t, realRoom)
}

// realRoom is the DynamoDB store over fresh tables (from template.yaml) on
// the emulator, with the room's projects, owners and agents.
func realRoom(t *testing.T) roomBackend {
	t.Helper()
	endpoint := os.Getenv(endpointEnv)
	if endpoint == "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not set, and CI is: integration tests must run in CI. Run them with infra/moto/with-emulator.sh", endpointEnv)
		}
		t.Skipf("SKIPPED: %s is not set. Run with infra/moto/with-emulator.sh go test -tags integration ./shared/web/", endpointEnv)
	}
	ctx := context.Background()
	client, err := stack.Client(ctx, endpoint)
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
	st := store.New(client, store.Tables{Tasks: names["TasksTable"], Steps: names["StepsTable"], Pulse: names["PulseTable"], Directory: names["DirectoryTable"]})
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
