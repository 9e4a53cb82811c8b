package store

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// putMarker puts a directory item only if no item has its key, the one
// conditional write behind every "first time only" marker (sign-in links,
// Slack requests): first is true when this put stored it, false when the
// marker was already there.
func (s *Store) putMarker(ctx context.Context, record any) (first bool, err error) {
	item, err := marshalItem(record)
	if err != nil {
		return false, err
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:           aws.String(s.tables.Directory),
		Item:                item,
		ConditionExpression: aws.String("attribute_not_exists(pk)"),
	})
	if _, lost := failedCondition(err); lost {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("put marker: %w", err)
	}
	return true, nil
}
