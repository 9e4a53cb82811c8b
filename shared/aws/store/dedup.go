package store

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Dedup items, in the directory table, remember that a target handled an event:
//
//	dedup  pk DEDUP#<target>#<event id>  sk DEDUP  status claimed|done, holder, lease_until (unix ms), ttl
//
// ttl lets DynamoDB drop them after DedupRetention, well past EventBridge's
// 24 hours of retries. They carry no agent_id, so the by_agent index ignores them.
const dedupSK = "DEDUP"

// DedupRetention is how long a handled event is remembered.
const DedupRetention = 7 * 24 * time.Hour

const (
	dedupClaimed = "claimed"
	dedupDone    = "done"
)

func dedupKey(target, eventID string) map[string]types.AttributeValue {
	return directoryKey("DEDUP#"+target+"#"+eventID, dedupSK)
}

type dedupRecord struct {
	PK         string `dynamodbav:"pk"`
	SK         string `dynamodbav:"sk"`
	Type       string `dynamodbav:"type"`
	Target     string `dynamodbav:"target"`
	EventID    string `dynamodbav:"event_id"`
	Status     string `dynamodbav:"status"`
	Holder     string `dynamodbav:"holder"`
	LeaseUntil int64  `dynamodbav:"lease_until"`
	TTL        int64  `dynamodbav:"ttl"`
}

// Claim takes (target, eventID) for holder until leaseUntil with one
// conditional put: it succeeds when no claim exists, the existing one is
// an unfinished claim whose lease ended by now, or it is holder's own (a
// retried put). Otherwise claimed is false and done tells a finished event
// from one another delivery is handling.
func (s *Store) Claim(ctx context.Context, target, eventID, holder string, now, leaseUntil time.Time) (claimed, done bool, err error) {
	key := dedupKey(target, eventID)
	item, err := marshalItem(dedupRecord{
		PK: "DEDUP#" + target + "#" + eventID, SK: dedupSK, Type: "dedup", Target: target, EventID: eventID,
		Status: dedupClaimed, Holder: holder, LeaseUntil: leaseUntil.UnixMilli(), TTL: now.Add(DedupRetention).Unix(),
	})
	if err != nil {
		return false, false, fmt.Errorf("claim %s for %s: %w", eventID, target, err)
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                aws.String(s.tables.Directory),
		Item:                     item,
		ConditionExpression:      aws.String("attribute_not_exists(pk) OR (#status = :claimed AND lease_until <= :now)"),
		ExpressionAttributeNames: map[string]string{"#status": "status"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":claimed": stringValue(dedupClaimed), ":now": numberValue(now.UnixMilli()),
		},
	})
	if err == nil {
		return true, false, nil
	}
	if _, lost := failedCondition(err); !lost {
		return false, false, fmt.Errorf("claim %s for %s: %w", eventID, target, err)
	}
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.tables.Directory), Key: key, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return false, false, fmt.Errorf("read claim of %s for %s: %w", eventID, target, err)
	}
	if out.Item == nil { // released between the put and the read: let the next delivery try
		return false, false, nil
	}
	var r dedupRecord
	if err := unmarshalItem(out.Item, &r); err != nil {
		return false, false, fmt.Errorf("read claim of %s for %s: %w", eventID, target, err)
	}
	if r.Status == dedupClaimed && r.Holder == holder {
		// Our own put landed and the SDK retried it after a lost answer
		// (a slow or busy endpoint): the claim is ours.
		return true, false, nil
	}
	return false, r.Status == dedupDone, nil
}

// Finish marks the event done for the target, if holder still holds it
// (a claim taken over after its lease belongs to the new holder).
func (s *Store) Finish(ctx context.Context, target, eventID, holder string) error {
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                aws.String(s.tables.Directory),
		Key:                      dedupKey(target, eventID),
		UpdateExpression:         aws.String("SET #status = :done"),
		ConditionExpression:      aws.String("holder = :holder"),
		ExpressionAttributeNames: map[string]string{"#status": "status"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":done": stringValue(dedupDone), ":holder": stringValue(holder),
		},
	})
	if err != nil {
		return writeError(fmt.Sprintf("finish %s for %s", eventID, target), err)
	}
	return nil
}

// Release deletes holder's unfinished claim so the next delivery runs the
// handler again; a claim that is done or held by another is left alone.
// (Alike Finish in shape only: Finish updates the claim, Release deletes it, each on its own condition.)
func (s *Store) Release(ctx context.Context, target, eventID, holder string) error {
	_, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: aws.String(s.tables.Directory),
		Key:       dedupKey(target, eventID),
		// A claim already gone is released: the SDK's retry of a release that landed passes.
		ConditionExpression:      aws.String("attribute_not_exists(pk) OR (holder = :holder AND #status = :claimed)"),
		ExpressionAttributeNames: map[string]string{"#status": "status"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":claimed": stringValue(dedupClaimed), ":holder": stringValue(holder),
		},
	})
	if err != nil {
		return writeError(fmt.Sprintf("release %s for %s", eventID, target), err)
	}
	return nil
}
