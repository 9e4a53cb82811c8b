//go:build integration

package web_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/useprickle/prickle/infra/stack"
	"github.com/useprickle/prickle/shared/admin"
	"github.com/useprickle/prickle/shared/store"
	"github.com/useprickle/prickle/shared/team"
)

// endpointEnv names the DynamoDB endpoint (the moto launcher) these tests use.
const endpointEnv = "PRICKLE_DYNAMODB_ENDPOINT"

func TestApprovalFlowsOnTheRealStore(t *testing.T) {
	runFlows(t, realStore)
}

// realStore is the DynamoDB store over fresh tables (from template.yaml) on
// the emulator, seeded with the flows' project, owners and agents.
func realStore(t *testing.T) team.Store {
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
	if err := adm.CreateProject(ctx, project); err != nil {
		t.Fatal(err)
	}
	for _, o := range []admin.Owner{{Name: "alice", Email: "alice@example.com", SlackChannel: "C0ALICE"}, {Name: "bob", Email: "bob@example.com"}} {
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

var notStageChars = regexp.MustCompile(`[^a-z0-9]+`)

// uniqueStage makes a short Stage parameter from the test's name and a random suffix.
func uniqueStage(t *testing.T) string {
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	name := notStageChars.ReplaceAllString(strings.ToLower(t.Name()), "-")
	if len(name) > 60 {
		name = name[:60]
	}
	return "it-web-" + strings.Trim(name, "-") + "-" + hex.EncodeToString(b)
}
