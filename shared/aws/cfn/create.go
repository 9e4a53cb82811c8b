package cfn

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// activeWait bounds how long one table may take to become ACTIVE.
const activeWait = 2 * time.Minute

// CreateTables creates each table as specified, waits until it is ACTIVE and
// turns on its TTL and point-in-time recovery. It is idempotent: a table that
// already exists is checked against the spec (keys, indexes, stream) and an
// existing table that differs is an error, never silently reused.
func CreateTables(ctx context.Context, client *dynamodb.Client, specs []TableSpec) error {
	for _, spec := range specs {
		if err := createTable(ctx, client, spec); err != nil {
			return fmt.Errorf("table %s (%s): %w", spec.Name(), spec.LogicalID, err)
		}
	}
	return nil
}

func createTable(ctx context.Context, client *dynamodb.Client, spec TableSpec) error {
	existing, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: spec.Create.TableName})
	var missing *types.ResourceNotFoundException
	switch {
	case errors.As(err, &missing):
		if _, err := client.CreateTable(ctx, spec.Create); err != nil {
			var inUse *types.ResourceInUseException
			if !errors.As(err, &inUse) { // someone else created it meanwhile: check it below
				return fmt.Errorf("create: %w", err)
			}
		}
	case err != nil:
		return fmt.Errorf("describe: %w", err)
	default:
		if err := sameShape(spec, existing.Table); err != nil {
			return err
		}
	}

	waiter := dynamodb.NewTableExistsWaiter(client)
	if err := waiter.Wait(ctx, &dynamodb.DescribeTableInput{TableName: spec.Create.TableName}, activeWait); err != nil {
		return fmt.Errorf("wait until active: %w", err)
	}
	if spec.TTLAttribute != "" {
		if err := enableTTL(ctx, client, spec); err != nil {
			return err
		}
	}
	if spec.PointInTimeRecovery {
		_, err := client.UpdateContinuousBackups(ctx, &dynamodb.UpdateContinuousBackupsInput{
			TableName:                        spec.Create.TableName,
			PointInTimeRecoverySpecification: &types.PointInTimeRecoverySpecification{PointInTimeRecoveryEnabled: aws.Bool(true)},
		})
		if err != nil {
			return fmt.Errorf("enable point-in-time recovery: %w", err)
		}
	}
	return nil
}

// enableTTL turns TTL on unless it already is on the same attribute
// (DynamoDB refuses to enable it twice).
func enableTTL(ctx context.Context, client *dynamodb.Client, spec TableSpec) error {
	d, err := client.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: spec.Create.TableName})
	if err != nil {
		return fmt.Errorf("describe TTL: %w", err)
	}
	if ttl := d.TimeToLiveDescription; ttl != nil {
		on := ttl.TimeToLiveStatus == types.TimeToLiveStatusEnabled || ttl.TimeToLiveStatus == types.TimeToLiveStatusEnabling
		if on && aws.ToString(ttl.AttributeName) == spec.TTLAttribute {
			return nil
		}
		if on {
			return fmt.Errorf("TTL is on attribute %s, template says %s", aws.ToString(ttl.AttributeName), spec.TTLAttribute)
		}
	}
	_, err = client.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName:               spec.Create.TableName,
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String(spec.TTLAttribute), Enabled: aws.Bool(true)},
	})
	if err != nil {
		return fmt.Errorf("enable TTL on %s: %w", spec.TTLAttribute, err)
	}
	return nil
}

// sameShape reports how an existing table differs from the spec in what
// callers rely on: its keys, its global indexes and its stream.
func sameShape(spec TableSpec, got *types.TableDescription) error {
	want := spec.Create
	if !sameKeys(want.KeySchema, got.KeySchema) {
		return fmt.Errorf("exists with a different key schema; delete it (or restart the emulator) to recreate it")
	}
	gotIndexes := map[string][]types.KeySchemaElement{}
	for _, g := range got.GlobalSecondaryIndexes {
		gotIndexes[aws.ToString(g.IndexName)] = g.KeySchema
	}
	if len(gotIndexes) != len(want.GlobalSecondaryIndexes) {
		return fmt.Errorf("exists with %d global indexes, template declares %d", len(gotIndexes), len(want.GlobalSecondaryIndexes))
	}
	for _, g := range want.GlobalSecondaryIndexes {
		keys, ok := gotIndexes[aws.ToString(g.IndexName)]
		if !ok || !sameKeys(g.KeySchema, keys) {
			return fmt.Errorf("exists without index %s as the template declares it", aws.ToString(g.IndexName))
		}
	}
	wantStream := want.StreamSpecification != nil
	gotStream := got.StreamSpecification != nil && aws.ToBool(got.StreamSpecification.StreamEnabled)
	if wantStream != gotStream || (wantStream && want.StreamSpecification.StreamViewType != got.StreamSpecification.StreamViewType) {
		return fmt.Errorf("exists with a different stream specification")
	}
	return nil
}

func sameKeys(a, b []types.KeySchemaElement) bool {
	return slices.EqualFunc(a, b, func(x, y types.KeySchemaElement) bool {
		return aws.ToString(x.AttributeName) == aws.ToString(y.AttributeName) && x.KeyType == y.KeyType
	})
}
