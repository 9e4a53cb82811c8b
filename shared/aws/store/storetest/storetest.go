// Package storetest gives integration tests a store over fresh tables of
// their own on the DynamoDB emulator, created exactly as template.yaml
// declares them, so tests are independent and the template is exercised,
// and the development harnesses (the local stack, the fault run, the
// measurements) what stands in for Lambda's side of DynamoDB: the stream
// poller (streamreader.go) and the proxy that loses answers (proxy.go). No
// function imports it.
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/useprickle/prickle/shared/aws/cfn"
	"github.com/useprickle/prickle/shared/aws/store"
)

// EndpointEnv names the emulator endpoint (the moto launcher) integration tests use.
const EndpointEnv = "PRICKLE_DYNAMODB_ENDPOINT"

// Endpoint returns the emulator's endpoint. Without one, a test fails under
// CI (integration tests must run there) and skips loudly elsewhere.
func Endpoint(t testing.TB) string {
	t.Helper()
	endpoint := os.Getenv(EndpointEnv)
	if endpoint == "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not set, and CI is: integration tests must run in CI. Run them with infra/dev/emulator/with-emulator.sh", EndpointEnv)
		}
		t.Skipf("SKIPPED: %s is not set. Run: infra/dev/emulator/with-emulator.sh go test -tags integration ./...", EndpointEnv)
	}
	return endpoint
}

// Fixture is a store over tables no other test uses.
type Fixture struct {
	Store  *store.Store
	Client *dynamodb.Client
	Tables store.Tables
}

// New creates fresh tables from template.yaml (under a unique Stage) on the
// emulator, deletes them when the test ends, and returns a store over them.
func New(t testing.TB) Fixture {
	t.Helper()
	ctx := context.Background()
	client := store.NewFunctionClient(Endpoint(t))
	tpl, err := cfn.LoadTemplate(templatePath(t))
	if err != nil {
		t.Fatal(err)
	}
	specs, err := tpl.Tables(map[string]string{"Stage": UniqueName(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := cfn.CreateTables(ctx, client, specs); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, s := range specs {
			_, err := client.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(s.Name())})
			// Gone already is the goal: under load the SDK may retry a delete
			// whose first answer was lost, and the retry finds no table.
			var gone *types.ResourceNotFoundException
			if err != nil && !errors.As(err, &gone) {
				t.Errorf("delete %s: %v", s.Name(), err)
			}
		}
	})
	names := map[string]string{}
	for _, s := range specs {
		names[s.LogicalID] = s.Name()
	}
	tables := store.Tables{Tasks: names["TasksTable"], Steps: names["StepsTable"], Pulse: names["PulseTable"], Directory: names["DirectoryTable"], Wakeups: names["WakeupsTable"], OAuth: names["OAuthTable"]}
	return Fixture{Store: store.New(client, tables), Client: client, Tables: tables}
}

// templatePath finds template.yaml at the module root, above the test's package.
func templatePath(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		p := filepath.Join(dir, "template.yaml")
		if _, err := os.Stat(p); err == nil {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("template.yaml not found above the test's directory")
		}
		dir = parent
	}
}

var notNameChars = regexp.MustCompile(`[^a-z0-9]+`)

// UniqueName makes a resource name (a Stage, a bus) from the test's name and a random suffix.
func UniqueName(t testing.TB) string {
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
