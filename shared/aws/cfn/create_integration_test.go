//go:build integration

package cfn_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/useprickle/prickle/shared/aws/cfn"
	"github.com/useprickle/prickle/shared/aws/store"
)

const endpointEnv = "PRICKLE_DYNAMODB_ENDPOINT"

func emulator(t *testing.T) *dynamodb.Client {
	t.Helper()
	endpoint := os.Getenv(endpointEnv)
	if endpoint == "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not set, and CI is: integration tests must run in CI. Start the emulator (.venv/bin/python infra/dev/emulator/launcher.py --port 4599) and set %s=http://127.0.0.1:4599", endpointEnv, endpointEnv)
		}
		t.Skipf("SKIPPED: %s is not set. Start the emulator (.venv/bin/python infra/dev/emulator/launcher.py --port 4599) and set %s=http://127.0.0.1:4599 to run this test", endpointEnv, endpointEnv)
	}
	return store.NewFunctionClient(endpoint)
}

func freshSpecs(t *testing.T) []cfn.TableSpec {
	t.Helper()
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	tpl, err := cfn.LoadTemplate("../../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	specs, err := tpl.Tables(map[string]string{"Stage": "stack-" + hex.EncodeToString(b)})
	if err != nil {
		t.Fatal(err)
	}
	return specs
}

func deleteTables(t *testing.T, client *dynamodb.Client, specs []cfn.TableSpec) {
	t.Cleanup(func() {
		for _, s := range specs {
			_, _ = client.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(s.Name())})
		}
	})
}

func TestCreateTablesAsDeclaredAndIdempotent(t *testing.T) {
	client := emulator(t)
	ctx := context.Background()
	specs := freshSpecs(t)
	deleteTables(t, client, specs)

	for range 2 { // the second run finds every table and leaves it alone
		if err := cfn.CreateTables(ctx, client, specs); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range specs {
		d, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(s.Name())})
		if err != nil {
			t.Fatal(err)
		}
		tbl := d.Table
		if tbl.TableStatus != types.TableStatusActive {
			t.Errorf("%s is %s", s.Name(), tbl.TableStatus)
		}
		if tbl.BillingModeSummary == nil || tbl.BillingModeSummary.BillingMode != types.BillingModePayPerRequest {
			t.Errorf("%s billing = %+v", s.Name(), tbl.BillingModeSummary)
		}
		if len(tbl.GlobalSecondaryIndexes) != len(s.Create.GlobalSecondaryIndexes) {
			t.Errorf("%s has %d indexes, want %d", s.Name(), len(tbl.GlobalSecondaryIndexes), len(s.Create.GlobalSecondaryIndexes))
		}

		ttl, err := client.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(s.Name())})
		if err != nil {
			t.Fatal(err)
		}
		ttlOn := ttl.TimeToLiveDescription != nil && ttl.TimeToLiveDescription.TimeToLiveStatus == types.TimeToLiveStatusEnabled
		streamOn := tbl.StreamSpecification != nil && aws.ToBool(tbl.StreamSpecification.StreamEnabled)
		if s.LogicalID == "StepsTable" {
			if !ttlOn || aws.ToString(ttl.TimeToLiveDescription.AttributeName) != "ttl" {
				t.Errorf("steps TTL = %+v, want ENABLED on ttl", ttl.TimeToLiveDescription)
			}
		} else if wantTTL := s.TTLAttribute != ""; ttlOn != wantTTL || (wantTTL && aws.ToString(ttl.TimeToLiveDescription.AttributeName) != s.TTLAttribute) {
			t.Errorf("%s: TTL %+v, want on %q", s.Name(), ttl.TimeToLiveDescription, s.TTLAttribute)
		}
		// The steps and tasks tables' streams feed step-expiry and task-events.
		switch wantStream := s.LogicalID == "StepsTable" || s.LogicalID == "TasksTable"; {
		case wantStream && (!streamOn || tbl.StreamSpecification.StreamViewType != types.StreamViewTypeNewAndOldImages || aws.ToString(tbl.LatestStreamArn) == ""):
			t.Errorf("%s stream = %+v (arn %q), want NEW_AND_OLD_IMAGES", s.Name(), tbl.StreamSpecification, aws.ToString(tbl.LatestStreamArn))
		case !wantStream && streamOn:
			t.Errorf("%s: stream on; the template declares none", s.Name())
		}
	}
}

func TestCreateTablesRefusesADifferentExistingTable(t *testing.T) {
	client := emulator(t)
	ctx := context.Background()
	specs := freshSpecs(t)[:1]
	deleteTables(t, client, specs)

	_, err := client.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            specs[0].Create.TableName,
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("id"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("id"), KeyType: types.KeyTypeHash}},
	})
	if err != nil {
		t.Fatal(err)
	}
	err = cfn.CreateTables(ctx, client, specs)
	if err == nil || !strings.Contains(err.Error(), "different key schema") {
		t.Fatalf("err = %v, want a key schema mismatch", err)
	}
}
