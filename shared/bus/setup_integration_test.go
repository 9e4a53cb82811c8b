//go:build integration

package bus_test

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
	"github.com/useprickle/prickle/shared/store"
)

// endpointEnv names the emulator endpoint (the moto launcher) these tests use.
const endpointEnv = "PRICKLE_DYNAMODB_ENDPOINT"

// emulator returns the emulator's endpoint: a failure under CI when it is
// missing, a loud skip otherwise.
func emulator(t *testing.T) string {
	t.Helper()
	endpoint := os.Getenv(endpointEnv)
	if endpoint == "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not set, and CI is: integration tests must run in CI. Run them with infra/moto/with-emulator.sh", endpointEnv)
		}
		t.Skipf("SKIPPED: %s is not set. Run: infra/moto/with-emulator.sh go test -tags integration ./shared/bus/", endpointEnv)
	}
	return endpoint
}

// newStore creates fresh tables as template.yaml declares them and returns a store over them.
func newStore(t *testing.T, endpoint string) *store.Store {
	t.Helper()
	ctx := context.Background()
	client, err := store.NewClient(ctx, endpoint)
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := stack.LoadTemplate("../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	specs, err := tpl.Tables(map[string]string{"Stage": uniqueName(t)})
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
	return store.New(client, store.Tables{Tasks: names["TasksTable"], Steps: names["StepsTable"], Pulse: names["PulseTable"], Directory: names["DirectoryTable"]})
}

var notNameChars = regexp.MustCompile(`[^a-z0-9]+`)

// uniqueName makes a resource name from the test's name and a random suffix.
func uniqueName(t *testing.T) string {
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	name := notNameChars.ReplaceAllString(strings.ToLower(t.Name()), "-")
	if len(name) > 30 {
		name = name[len(name)-30:]
	}
	return "it-" + strings.Trim(name, "-") + "-" + hex.EncodeToString(b)
}
