package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/useprickle/prickle/shared/domain/audit"
	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/team"
)

// maxTransactItems is DynamoDB's limit on the writes of one transaction.
const maxTransactItems = 100

// stepRecord is a step item, keyed (task_id, step_id): the step under its
// json names (marshalItem), its times in UTC, but for input (and
// edited_input, the owner's edit of an approved call), stored as the
// canonical JSON in a string (not binary), so it comes back byte for byte;
// ttl is expires_at in epoch seconds while the step is pending or approved,
// so DynamoDB's TTL deletion (and its stream) reports the expiry, and a
// retention period later once the step is settled, so its record stays readable.
type stepRecord struct {
	step.Step
	Input  string `json:"input"`
	Edited string `json:"edited_input,omitempty"`
	TTL    int64  `json:"ttl"`
}

func newStepRecord(s step.Step) stepRecord {
	s.DecidedAt, s.CreatedAt, s.ExpiresAt = utcPtr(s.DecidedAt), s.CreatedAt.UTC(), s.ExpiresAt.UTC()
	return stepRecord{Step: s, Input: string(s.Input), Edited: string(s.Edited), TTL: ttlOf(s)}
}

func (r stepRecord) step() step.Step {
	s := r.Step
	s.Input, s.Edited = json.RawMessage(r.Input), edited(r.Edited)
	return s
}

// edited is a stored edit as the step holds it: none when the attribute is absent.
func edited(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	return json.RawMessage(s)
}

// Step reads one step, strongly consistent. It is returned as stored:
// callers apply step.Effective, since TTL deletion lags expiry.
func (s *Store) Step(ctx context.Context, taskID, stepID string) (step.Step, error) {
	key := map[string]types.AttributeValue{"task_id": stringValue(taskID), "step_id": stringValue(stepID)}
	var r stepRecord
	if err := s.getRecord(ctx, s.tables.Steps, key, fmt.Sprintf("step %s of task %s", stepID, taskID), &r); err != nil {
		return step.Step{}, err
	}
	return r.step(), nil
}

// StepsForTask reads every stored step of a task, strongly consistent, in step id order.
func (s *Store) StepsForTask(ctx context.Context, taskID string) ([]step.Step, error) {
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(s.tables.Steps),
		KeyConditionExpression:    aws.String("task_id = :t"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":t": stringValue(taskID)},
		ConsistentRead:            aws.Bool(true),
	}
	steps, err := queryAll(ctx, s.db, in, stepRecord.step)
	if err != nil {
		return nil, fmt.Errorf("steps of task %s: %w", taskID, err)
	}
	return steps, nil
}

// SaveSteps writes the steps, each only if its stored status is still its
// Prev (or, Prev empty, only if it is new), the audit entry of each, and the
// task move and the spend added if any, as one transaction: a single failed
// condition is ErrConflict and nothing is written, so no step changes
// without its entry. The transaction carries a client request token (the
// SDK fills ClientRequestToken in before its first attempt), so the SDK's
// retry of a transaction whose answer was lost is answered success by
// DynamoDB (and the emulator) instead of failing its own #status = :prev;
// and each step carries the transaction's own id (write_id), so where the
// token is not honoured, a retry that fails on a step this very transaction
// wrote is still the success it was.
func (s *Store) SaveSteps(ctx context.Context, c team.StepChange) error {
	write, err := newWriteID()
	if err != nil {
		return fmt.Errorf("save steps: %w", err)
	}
	var items []types.TransactWriteItem
	for i, w := range c.Steps {
		item, err := marshalItem(newStepRecord(w.Step))
		if err != nil {
			return fmt.Errorf("save step %s: %w", w.Step.ID, err)
		}
		item[writeIDAttr] = stringValue(write)
		put := &types.Put{TableName: aws.String(s.tables.Steps), Item: item, ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}
		if w.Prev == "" {
			put.ConditionExpression = aws.String("attribute_not_exists(step_id)")
		} else {
			put.ConditionExpression = aws.String("#status = :prev")
			put.ExpressionAttributeNames = map[string]string{"#status": "status"}
			put.ExpressionAttributeValues = map[string]types.AttributeValue{":prev": stringValue(string(w.Prev))}
		}
		items = append(items, types.TransactWriteItem{Put: put})
		at := c.At
		if at.IsZero() {
			at = time.Now().UTC()
		}
		// The write's place in the change orders entries of the same moment
		// (a withdrawn step before the step that withdrew it).
		e := audit.ForStep(w.Step, w.Prev, at)
		e.Key = fmt.Sprintf("%02d.%s", i, e.Key)
		entry, err := s.auditPut(e)
		if err != nil {
			return fmt.Errorf("save step %s: audit: %w", w.Step.ID, err)
		}
		items = append(items, types.TransactWriteItem{Put: entry})
	}
	if c.Move != nil {
		if c.PrevVersion < 1 {
			return fmt.Errorf("save steps: previous version %d of task %s is not a stored version", c.PrevVersion, c.Move.Task.ID)
		}
		plan, err := s.planMove(ctx, c.Move.Task, c.Move.Event, c.PrevVersion)
		if err != nil {
			return fmt.Errorf("save steps: move task %s: %w", c.Move.Task.ID, err)
		}
		items = append(append(items, plan.files...), types.TransactWriteItem{Put: plan.put})
	}
	if c.Spend != nil {
		u, err := s.spendUpdate(*c.Spend, c.Spend.Spent, nil)
		if err != nil {
			return fmt.Errorf("save steps: %w", err)
		}
		items = append(items, types.TransactWriteItem{Update: u})
	}
	switch {
	case len(items) == 0:
		return nil
	case len(items) > maxTransactItems:
		return fmt.Errorf("save steps: %d writes exceed DynamoDB's %d per transaction", len(items), maxTransactItems)
	}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	if landedTransaction(err, write) {
		return nil
	}
	if err != nil {
		return writeError(fmt.Sprintf("save %d steps", len(c.Steps)), err)
	}
	return nil
}

// SettledRetention is how long a decided, used, withdrawn or expired step is kept.
const SettledRetention = 30 * 24 * time.Hour

func ttlOf(s step.Step) int64 {
	if s.Status == step.Pending || s.Status == step.Approved {
		return s.ExpiresAt.Unix()
	}
	return s.ExpiresAt.Add(SettledRetention).Unix()
}
