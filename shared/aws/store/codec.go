package store

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/useprickle/prickle/shared/team"
)

// Items are store-private record structs with explicit dynamodbav tags.
// Nested domain values (a packet, a result, a checkpoint, an amount) are
// stored as maps named by their json tags, the names of the seed schemas,
// so the domain types carry no AWS tags and items read like the API.

func marshalItem(record any) (map[string]types.AttributeValue, error) {
	item, err := attributevalue.MarshalMapWithOptions(record, func(o *attributevalue.EncoderOptions) {
		o.TagKey = "json"
	})
	if err != nil {
		return nil, fmt.Errorf("marshal %T: %w", record, err)
	}
	return item, nil
}

func unmarshalItem(item map[string]types.AttributeValue, record any) error {
	err := attributevalue.UnmarshalMapWithOptions(item, record, func(o *attributevalue.DecoderOptions) {
		o.TagKey = "json"
	})
	if err != nil {
		return fmt.Errorf("unmarshal %T: %w", record, err)
	}
	return nil
}

// sortableLayout writes UTC times with fixed-width milliseconds, so that
// strings sort as times do (RFC3339Nano drops trailing zeros and does not).
const sortableLayout = "2006-01-02T15:04:05.000Z07:00"

func sortableTime(t time.Time) string {
	return t.UTC().Format(sortableLayout)
}

// sortableParsed reads back what sortableTime wrote; a malformed string is the zero time.
func sortableParsed(s string) time.Time {
	t, _ := time.Parse(sortableLayout, s)
	return t
}

// utcPtr keeps optional times in UTC like the others.
func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

func stringValue(s string) types.AttributeValue {
	return &types.AttributeValueMemberS{Value: s}
}

func numberValue(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: fmt.Sprint(n)}
}

// getRecord reads one item of a table strongly consistent into record; what
// names the item in errors ("get <what>: …" when the read fails), and a
// missing item is team.ErrNotFound.
func (s *Store) getRecord(ctx context.Context, table string, key map[string]types.AttributeValue, what string, record any) error {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: key, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return fmt.Errorf("get %s: %w", what, err)
	}
	if out.Item == nil {
		return fmt.Errorf("%s: %w", what, team.ErrNotFound)
	}
	if err := unmarshalItem(out.Item, record); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// partitionQuery is a strongly consistent query of every item of one partition (pk) of a table.
func partitionQuery(table, pk string) *dynamodb.QueryInput {
	return &dynamodb.QueryInput{
		TableName:                 aws.String(table),
		KeyConditionExpression:    aws.String("pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": stringValue(pk)},
		ConsistentRead:            aws.Bool(true),
	}
}

// queryAll reads every page of a query and turns each item, decoded as
// record type R, into a T; a query that matches nothing gives an empty slice.
func queryAll[R, T any](ctx context.Context, db operations, in *dynamodb.QueryInput, convert func(R) T) ([]T, error) {
	out := []T{}
	p := dynamodb.NewQueryPaginator(db.Query, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, item := range page.Items {
			var r R
			if err := unmarshalItem(item, &r); err != nil {
				return nil, err
			}
			out = append(out, convert(r))
		}
	}
	return out, nil
}
