package store

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// A markerRecord is a "first time only" marker in the directory table:
// its key, what it marks, when it was put, and when DynamoDB may drop it.
type markerRecord struct {
	PK   string `dynamodbav:"pk"`
	SK   string `dynamodbav:"sk"`
	Type string `dynamodbav:"type"`
	At   string `dynamodbav:"at"`
	TTL  int64  `dynamodbav:"ttl"`
}

// putMarker puts a marker only if no item has its key, the one conditional
// write behind every "first time only" marker (sign-in links, Slack
// requests): first is true when this put stored it, false when the marker
// was already there.
func (s *Store) putMarker(ctx context.Context, pk, sk, kind string, at, drop time.Time) (first bool, err error) {
	item, err := marshalItem(markerRecord{PK: pk, SK: sk, Type: kind, At: sortableTime(at), TTL: drop.Unix()})
	if err != nil {
		return false, err
	}
	err = s.putNew(ctx, s.tables.Directory, item)
	if _, lost := failedCondition(err); lost {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("put marker: %w", err)
	}
	return true, nil
}

// putNewRecord stores a record with putNew; what names it in errors, and
// a key taken is team.ErrConflict (writeError).
func (s *Store) putNewRecord(ctx context.Context, table, what string, record any) error {
	item, err := marshalItem(record)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := s.putNew(ctx, table, item); err != nil {
		return writeError(what, err)
	}
	return nil
}

// putNew puts an item only if no item has its key; a key taken fails the
// condition (failedCondition). The item carries this put's own id (put_id),
// so the SDK's retry of a put whose answer was lost finds its own item and
// succeeds, never mistaken for a second put of that key.
func (s *Store) putNew(ctx context.Context, table string, item map[string]types.AttributeValue) error {
	put, err := newWriteID()
	if err != nil {
		return err
	}
	item["put_id"] = stringValue(put)
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                 aws.String(table),
		Item:                      item,
		ConditionExpression:       aws.String("attribute_not_exists(pk) OR put_id = :put"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":put": stringValue(put)},
	})
	return err
}
