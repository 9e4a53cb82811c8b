package store

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/useprickle/prickle/shared/domain/wakeup"
	"github.com/useprickle/prickle/shared/team"
)

// Pull-mode wake-ups, in the wakeups table:
//
//	pk agent_id  sk wakeup_id (wakeup.PendingID: oldest first)
//	task_id, reason, resumes_run, event_id, created_at; visible_at (unix
//	millis: claimable when not after now); claim_hash (SHA-256 of the latest
//	claim receipt), run_id and run_hash (the run the latest
//	claim started and the SHA-256 of its token, ended when the wake-up is
//	claimed again), done_at
//	once acknowledged; ttl.
//
// No token is stored: a claim mints the run token.
type wakeupRecord struct {
	Agent      string `dynamodbav:"agent_id"`
	ID         string `dynamodbav:"wakeup_id"`
	TaskID     string `dynamodbav:"task_id"`
	Reason     string `dynamodbav:"reason"`
	ResumesRun string `dynamodbav:"resumes_run"`
	EventID    string `dynamodbav:"event_id"`
	CreatedAt  string `dynamodbav:"created_at"`
	VisibleAt  int64  `dynamodbav:"visible_at"`
	ClaimHash  string `dynamodbav:"claim_hash,omitempty"`
	RunID      string `dynamodbav:"run_id,omitempty"`
	RunHash    string `dynamodbav:"run_hash,omitempty"`
	DoneAt     string `dynamodbav:"done_at,omitempty"`
	TTL        int64  `dynamodbav:"ttl"`
}

func (r wakeupRecord) pending() wakeup.Pending {
	return wakeup.Pending{ID: r.ID, Agent: r.Agent, TaskID: r.TaskID, Reason: r.Reason, ResumesRun: r.ResumesRun, EventID: r.EventID, CreatedAt: sortableParsed(r.CreatedAt)}
}

func (s *Store) wakeupKey(agent, id string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"agent_id": stringValue(agent), "wakeup_id": stringValue(id)}
}

// updateWakeup makes in, a conditional update, of agent's wake-up id: lost
// says its condition failed (nothing was written), old is what in's
// ReturnValues asked for.
func (s *Store) updateWakeup(ctx context.Context, agent, id string, in dynamodb.UpdateItemInput) (old map[string]types.AttributeValue, lost bool, err error) {
	in.TableName = aws.String(s.tables.Wakeups)
	in.Key = s.wakeupKey(agent, id)
	out, err := s.db.UpdateItem(ctx, &in)
	if _, lost := failedCondition(err); lost {
		return nil, true, nil
	}
	if err != nil {
		return nil, false, err
	}
	return out.Attributes, false, nil
}

// PutPendingWakeup stores a wake-up for pull, claimable at once; the same
// wake-up stored again (a redelivered event) is left as it is.
func (s *Store) PutPendingWakeup(ctx context.Context, p wakeup.Pending) error {
	at := p.CreatedAt.UTC()
	item, err := marshalItem(wakeupRecord{
		Agent: p.Agent, ID: p.ID, TaskID: p.TaskID, Reason: p.Reason, ResumesRun: p.ResumesRun, EventID: p.EventID,
		CreatedAt: sortableTime(at), VisibleAt: at.UnixMilli(), TTL: at.Add(wakeup.PendingRetention).Unix(),
	})
	if err != nil {
		return fmt.Errorf("store wake-up %s of %s: %w", p.ID, p.Agent, err)
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(s.tables.Wakeups), Item: item,
		ConditionExpression: aws.String("attribute_not_exists(wakeup_id)"),
	})
	if _, exists := failedCondition(err); exists {
		return nil
	}
	if err != nil {
		return fmt.Errorf("store wake-up %s of %s: %w", p.ID, p.Agent, err)
	}
	return nil
}

// agentWakeups queries an agent's wake-ups (:a), strongly consistent, that
// pass filter, whose other values (and #ttl, the ttl attribute) it names.
func (s *Store) agentWakeups(agent, filter string, values map[string]types.AttributeValue) *dynamodb.QueryInput {
	values[":a"] = stringValue(agent)
	return &dynamodb.QueryInput{
		TableName:                 aws.String(s.tables.Wakeups),
		KeyConditionExpression:    aws.String("agent_id = :a"),
		FilterExpression:          aws.String(filter),
		ExpressionAttributeNames:  map[string]string{"#ttl": "ttl"},
		ExpressionAttributeValues: values,
		ConsistentRead:            aws.Bool(true),
	}
}

// ClaimableWakeups lists up to limit of an agent's wake-ups that a claim may
// take at now (not acknowledged, not claimed or past their visibility, not
// expired), oldest first, strongly consistent.
func (s *Store) ClaimableWakeups(ctx context.Context, agent string, now time.Time, limit int) ([]wakeup.Pending, error) {
	in := s.agentWakeups(agent, "visible_at <= :now AND attribute_not_exists(done_at) AND #ttl > :secs",
		map[string]types.AttributeValue{":now": numberValue(now.UnixMilli()), ":secs": numberValue(now.Unix())})
	out := []wakeup.Pending{}
	p := dynamodb.NewQueryPaginator(s.db.Query, in)
	for p.HasMorePages() && len(out) < limit {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("claimable wake-ups of %s: %w", agent, err)
		}
		for _, item := range page.Items {
			var r wakeupRecord
			if err := unmarshalItem(item, &r); err != nil {
				return nil, fmt.Errorf("claimable wake-ups of %s: %w", agent, err)
			}
			if len(out) < limit {
				out = append(out, r.pending())
			}
		}
	}
	return out, nil
}

// ClaimWakeup takes one wake-up for the claim whose hash is given, in one
// conditional write: it must still be claimable at now (or already be this
// claim's: the SDK's retry of a claim whose answer was lost), and becomes
// invisible until until. False means another claim got it first (or it was
// acknowledged meanwhile). prev is the run an earlier claim of it started
// (zero for a first claim): that run is over.
func (s *Store) ClaimWakeup(ctx context.Context, agent, id, claimHash string, now, until time.Time) (won bool, prev wakeup.RunRef, err error) {
	old, lost, err := s.updateWakeup(ctx, agent, id, dynamodb.UpdateItemInput{
		UpdateExpression:    aws.String("SET claim_hash = :h, visible_at = :until REMOVE run_id, run_hash"),
		ConditionExpression: aws.String("attribute_exists(wakeup_id) AND attribute_not_exists(done_at) AND (visible_at <= :now OR claim_hash = :h)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":h": stringValue(claimHash), ":until": numberValue(until.UnixMilli()), ":now": numberValue(now.UnixMilli()),
		},
		ReturnValues: types.ReturnValueUpdatedOld,
	})
	if lost {
		return false, wakeup.RunRef{}, nil
	}
	if err != nil {
		return false, wakeup.RunRef{}, fmt.Errorf("claim wake-up %s of %s: %w", id, agent, err)
	}
	if v, ok := old["run_id"].(*types.AttributeValueMemberS); ok {
		prev.ID = v.Value
	}
	if v, ok := old["run_hash"].(*types.AttributeValueMemberS); ok {
		prev.TokenHash = v.Value
	}
	return true, prev, nil
}

// SetWakeupRun records the run a claim started, if that claim is still the latest.
func (s *Store) SetWakeupRun(ctx context.Context, agent, id, claimHash string, run wakeup.RunRef) error {
	_, lost, err := s.updateWakeup(ctx, agent, id, dynamodb.UpdateItemInput{
		UpdateExpression:    aws.String("SET run_id = :id, run_hash = :r"),
		ConditionExpression: aws.String("attribute_exists(wakeup_id) AND claim_hash = :h"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":h": stringValue(claimHash), ":id": stringValue(run.ID), ":r": stringValue(run.TokenHash),
		},
	})
	if lost {
		return fmt.Errorf("wake-up %s of %s: %w", id, agent, wakeup.ErrStaleClaim)
	}
	if err != nil {
		return fmt.Errorf("record run of wake-up %s of %s: %w", id, agent, err)
	}
	return nil
}

// ExtendWakeup keeps a claimed wake-up from other claims until until, if
// claimHash is still its latest claim's and it is not done. Unknown is
// team.ErrNotFound; another receipt, or done, is wakeup.ErrStaleClaim.
func (s *Store) ExtendWakeup(ctx context.Context, agent, id, claimHash string, until time.Time) error {
	return s.settleClaim(ctx, "extend", agent, id, claimHash, "SET visible_at = :v", numberValue(until.UnixMilli()), false)
}

// AckWakeup marks a claimed wake-up done for good, if claimHash is its
// latest claim's. Unknown (or another agent's) is team.ErrNotFound; another
// receipt is wakeup.ErrStaleClaim; acknowledging it again with the same receipt is nil.
func (s *Store) AckWakeup(ctx context.Context, agent, id, claimHash string, now time.Time) error {
	return s.settleClaim(ctx, "ack", agent, id, claimHash, "SET done_at = :v", stringValue(sortableTime(now)), true)
}

// settleClaim applies update (with :v) to a wake-up whose latest claim is
// claimHash's and which is not done. When that condition fails it reads the
// wake-up to say why: unknown, or another claim's (or done) — except that a
// repeated ack (again true) of the claim that acknowledged it is nil.
func (s *Store) settleClaim(ctx context.Context, op, agent, id, claimHash, update string, v types.AttributeValue, again bool) error {
	_, lost, err := s.updateWakeup(ctx, agent, id, dynamodb.UpdateItemInput{
		UpdateExpression:          aws.String(update),
		ConditionExpression:       aws.String("attribute_exists(wakeup_id) AND claim_hash = :h AND attribute_not_exists(done_at)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":h": stringValue(claimHash), ":v": v},
	})
	if !lost {
		if err != nil {
			return fmt.Errorf("%s wake-up %s of %s: %w", op, id, agent, err)
		}
		return nil
	}
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.tables.Wakeups), Key: s.wakeupKey(agent, id), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return fmt.Errorf("%s wake-up %s of %s: %w", op, id, agent, err)
	}
	if out.Item == nil {
		return fmt.Errorf("wake-up %s of %s: %w", id, agent, team.ErrNotFound)
	}
	var r wakeupRecord
	if err := unmarshalItem(out.Item, &r); err != nil {
		return fmt.Errorf("%s wake-up %s of %s: %w", op, id, agent, err)
	}
	if again && r.ClaimHash == claimHash && r.DoneAt != "" {
		return nil
	}
	return fmt.Errorf("%s wake-up %s of %s: %w", op, id, agent, wakeup.ErrStaleClaim)
}

// HoldWakeups keeps an agent's waiting wake-ups (not acknowledged, not yet
// expired at now) until at least until, moving their ttl where it is
// earlier, so wake-ups held back by a spending cap outlive the day they
// wait for. It writes only those it moves, and says how many.
func (s *Store) HoldWakeups(ctx context.Context, agent string, now, until time.Time) (int, error) {
	in := s.agentWakeups(agent, "attribute_not_exists(done_at) AND #ttl > :now AND #ttl < :until",
		map[string]types.AttributeValue{":now": numberValue(now.Unix()), ":until": numberValue(until.Unix())})
	ids, err := queryAll(ctx, s.db, in, func(r wakeupRecord) string { return r.ID })
	if err != nil {
		return 0, fmt.Errorf("wake-ups of %s to hold: %w", agent, err)
	}
	moved := 0
	for _, id := range ids {
		_, lost, err := s.updateWakeup(ctx, agent, id, dynamodb.UpdateItemInput{
			UpdateExpression: aws.String("SET #ttl = :until"),
			// <=, so the SDK's retry of a move that landed passes and is counted.
			ConditionExpression:       aws.String("attribute_exists(wakeup_id) AND attribute_not_exists(done_at) AND #ttl <= :until"),
			ExpressionAttributeNames:  map[string]string{"#ttl": "ttl"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":until": numberValue(until.Unix())},
		})
		if lost {
			continue
		}
		if err != nil {
			return moved, fmt.Errorf("hold wake-up %s of %s: %w", id, agent, err)
		}
		moved++
	}
	return moved, nil
}
