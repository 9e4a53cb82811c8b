package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/useprickle/prickle/shared/task"
	"github.com/useprickle/prickle/shared/team"
)

// History line n of a task is the item (TASK#<id>, HIST#<n, six digits>):
// the line written with the task's version n, so sk order is history order.
// It carries none of the index attributes, so the task indexes stay sparse.
const historyPrefix = "HIST#"

func historySK(seq int) string { return fmt.Sprintf("%s%06d", historyPrefix, seq) }

type eventRecord struct {
	PK     string      `dynamodbav:"pk"`
	SK     string      `dynamodbav:"sk"`
	Type   string      `dynamodbav:"type"`
	Seq    int         `dynamodbav:"seq"`
	At     time.Time   `dynamodbav:"at"`
	By     string      `dynamodbav:"by"`
	Action string      `dynamodbav:"action"`
	From   *task.State `dynamodbav:"from"`
	To     task.State  `dynamodbav:"to"`
	Note   *string     `dynamodbav:"note"`
}

func newEventRecord(taskID string, seq int, e task.Event) eventRecord {
	return eventRecord{
		PK: taskPK(taskID), SK: historySK(seq), Type: "event", Seq: seq,
		At: e.At.UTC(), By: e.By, Action: e.Action, From: e.From, To: e.To, Note: e.Note,
	}
}

func (r eventRecord) event() task.Event {
	return task.Event{Seq: r.Seq, At: r.At, By: r.By, Action: r.Action, From: r.From, To: r.To, Note: r.Note}
}

// History returns a task's history oldest first, read strongly consistent;
// a task without history does not exist (ErrNotFound).
func (s *Store) History(ctx context.Context, id string) ([]task.Event, error) {
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(s.tables.Tasks),
		KeyConditionExpression:    aws.String("pk = :pk AND begins_with(sk, :hist)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": stringValue(taskPK(id)), ":hist": stringValue(historyPrefix)},
		ConsistentRead:            aws.Bool(true),
	}
	events, err := queryAll(ctx, s.db, in, eventRecord.event)
	if err != nil {
		return nil, fmt.Errorf("history of task %s: %w", id, err)
	}
	if len(events) == 0 {
		return nil, fmt.Errorf("history of task %s: %w", id, team.ErrNotFound)
	}
	return events, nil
}

// HistoryLine reads line seq of a task's history (strongly consistent: it
// was written in the same transaction as the task version seq).
func (s *Store) HistoryLine(ctx context.Context, id string, seq int) (task.Event, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(s.tables.Tasks),
		Key:            map[string]types.AttributeValue{"pk": stringValue(taskPK(id)), "sk": stringValue(historySK(seq))},
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return task.Event{}, fmt.Errorf("history line %d of task %s: %w", seq, id, err)
	}
	if out.Item == nil {
		return task.Event{}, fmt.Errorf("history line %d of task %s: %w", seq, id, team.ErrNotFound)
	}
	var r eventRecord
	if err := unmarshalItem(out.Item, &r); err != nil {
		return task.Event{}, fmt.Errorf("history line %d of task %s: %w", seq, id, err)
	}
	return r.event(), nil
}

// TaskWithHistory reads a task and its history in one strongly consistent
// Query of the task's partition, which holds nothing else.
func (s *Store) TaskWithHistory(ctx context.Context, id string) (task.Task, []task.Event, error) {
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(s.tables.Tasks),
		KeyConditionExpression:    aws.String("pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": stringValue(taskPK(id))},
		ConsistentRead:            aws.Bool(true),
	}
	var items []map[string]types.AttributeValue
	for p := dynamodb.NewQueryPaginator(s.db, in); p.HasMorePages(); {
		page, err := p.NextPage(ctx)
		if err != nil {
			return task.Task{}, nil, fmt.Errorf("task %s with history: %w", id, err)
		}
		items = append(items, page.Items...)
	}
	var t *task.Task
	events := []task.Event{}
	for _, item := range items {
		sk, _ := item["sk"].(*types.AttributeValueMemberS)
		switch {
		case sk == nil:
			return task.Task{}, nil, fmt.Errorf("task %s with history: item without sk", id)
		case sk.Value == taskSK:
			decoded, err := decodeTask(item)
			if err != nil {
				return task.Task{}, nil, fmt.Errorf("task %s: %w", id, err)
			}
			t = &decoded
		case strings.HasPrefix(sk.Value, historyPrefix):
			var r eventRecord
			if err := unmarshalItem(item, &r); err != nil {
				return task.Task{}, nil, fmt.Errorf("history of task %s: %w", id, err)
			}
			events = append(events, r.event())
		}
	}
	if t == nil {
		return task.Task{}, nil, fmt.Errorf("task %s: %w", id, team.ErrNotFound)
	}
	return *t, events, nil
}
