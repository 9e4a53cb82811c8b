package store

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Rate windows (sign-in links per name and per client, OAuth registrations
// per network and overall) count requests in one item a window:
//
//	pk <counter>  sk <window start>  ids (a string set: one random id a request), ttl
//
// A request adds its own id, so the SDK's retry of a count whose answer was
// lost (the first attempt counted) adds nothing more: a counter is never one
// too high, and a client is never refused before its window is full.
type windowCount struct {
	table  string
	pk     string
	window time.Time
	max    int
	ttl    time.Time
	// kind, when set, is stored as the item's type (directory items have one).
	kind string
}

// count adds one request to the window unless it holds max already.
func (s *Store) count(ctx context.Context, w windowCount) (bool, error) {
	id, err := newWriteID()
	if err != nil {
		return false, fmt.Errorf("count %s: %w", w.pk, err)
	}
	set := "SET #ttl = :ttl"
	names := map[string]string{"#ttl": "ttl"}
	values := map[string]types.AttributeValue{
		":id": &types.AttributeValueMemberSS{Value: []string{id}}, ":one": stringValue(id),
		":max": numberValue(int64(w.max)), ":ttl": numberValue(w.ttl.Unix()),
	}
	if w.kind != "" {
		set += ", #type = :type"
		names["#type"], values[":type"] = "type", stringValue(w.kind)
	}
	key := directoryKey(w.pk, sortableTime(w.window))
	_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(w.table),
		Key:                       key,
		UpdateExpression:          aws.String("ADD ids :id " + set),
		ConditionExpression:       aws.String("attribute_not_exists(ids) OR size(ids) < :max OR contains(ids, :one)"),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	})
	if _, limited := failedCondition(err); limited {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("count %s: %w", w.pk, err)
	}
	return true, nil
}

// clearCount deletes a window's counter and returns the requests it held
// (0 when there was none). It reads the count, then deletes the counter only
// while it holds that many (another request counted in between: read
// again), so the SDK's retry of a delete that landed finds it gone and the
// count read stands.
func (s *Store) clearCount(ctx context.Context, table, pk string, window time.Time) (int, error) {
	key := directoryKey(pk, sortableTime(window))
	for range 5 {
		out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: key, ConsistentRead: aws.Bool(true)})
		if err != nil {
			return 0, err
		}
		if out.Item == nil {
			return 0, nil
		}
		del := &dynamodb.DeleteItemInput{TableName: aws.String(table), Key: key,
			ConditionExpression: aws.String("attribute_not_exists(pk) OR attribute_not_exists(ids)")}
		n := 0
		if ids, ok := out.Item["ids"].(*types.AttributeValueMemberSS); ok {
			n = len(ids.Value)
			del.ConditionExpression = aws.String("attribute_not_exists(pk) OR size(ids) = :n")
			del.ExpressionAttributeValues = map[string]types.AttributeValue{":n": numberValue(int64(n))}
		}
		_, err = s.db.DeleteItem(ctx, del)
		if _, changed := failedCondition(err); changed {
			continue
		}
		if err != nil {
			return 0, err
		}
		return n, nil
	}
	return 0, fmt.Errorf("clear count %s: counted again while clearing, 5 times", pk)
}
