package store

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/team"
)

// History line n of a task is the item (TASK#<id>, HIST#<n, six digits>):
// the line written with the task's version n, so sk order is history order.
// A move's line first rides on the task item (pending.go) and is filed as
// its HIST item from the tasks stream. It carries none of the index
// attributes, so the task indexes stay sparse.
const historyPrefix = "HIST#"

func historySK(seq int) string { return fmt.Sprintf("%s%06d", historyPrefix, seq) }

type eventRecord struct {
	PK   string `dynamodbav:"pk"`
	SK   string `dynamodbav:"sk"`
	Type string `dynamodbav:"type"`
	lineRecord
}

func newEventRecord(taskID string, l lineRecord) eventRecord {
	return eventRecord{PK: taskPK(taskID), SK: historySK(l.Seq), Type: "event", lineRecord: l}
}

// partition is what a Query of a task's partition returned: the task item
// (nil when absent) and the filed lines among the items, oldest first.
type partition struct {
	task  *taskRecord
	filed []lineRecord
}

// history is the partition's whole history: filed and pending lines merged.
func (p partition) history() []task.Event {
	var pending []lineRecord
	if p.task != nil {
		pending = p.task.Pending
	}
	return mergeLines(p.filed, pending)
}

// queryPartition reads items of a task's partition, strongly consistent:
// all of them (limit 0), or, newest first, the task item and the newest
// limit-1 filed lines. startSK, when set, skips the lines before it.
func (s *Store) queryPartition(ctx context.Context, id string, limit int, startSK string) (partition, error) {
	in := partitionQuery(s.tables.Tasks, taskPK(id))
	if startSK != "" {
		in.KeyConditionExpression = aws.String("pk = :pk AND sk >= :start")
		in.ExpressionAttributeValues[":start"] = stringValue(startSK)
	}
	var items []map[string]types.AttributeValue
	if limit > 0 {
		in.ScanIndexForward = aws.Bool(false)
		in.Limit = aws.Int32(int32(limit))
		out, err := s.db.Query(ctx, in)
		if err != nil {
			return partition{}, err
		}
		items = out.Items
	} else {
		for p := dynamodb.NewQueryPaginator(s.db.Query, in); p.HasMorePages(); {
			page, err := p.NextPage(ctx)
			if err != nil {
				return partition{}, err
			}
			items = append(items, page.Items...)
		}
	}
	var p partition
	for _, item := range items {
		sk, _ := item["sk"].(*types.AttributeValueMemberS)
		switch {
		case sk == nil:
			return partition{}, fmt.Errorf("item without sk")
		case sk.Value == taskSK:
			var r taskRecord
			if err := unmarshalItem(item, &r); err != nil {
				return partition{}, fmt.Errorf("task: %w", err)
			}
			p.task = &r
		case strings.HasPrefix(sk.Value, historyPrefix):
			var r eventRecord
			if err := unmarshalItem(item, &r); err != nil {
				return partition{}, fmt.Errorf("history: %w", err)
			}
			p.filed = append(p.filed, r.lineRecord)
		}
	}
	if limit > 0 {
		slices.Reverse(p.filed)
	}
	return p, nil
}

// History returns a task's history oldest first, read strongly consistent;
// a task that does not exist has none (ErrNotFound).
func (s *Store) History(ctx context.Context, id string) ([]task.Event, error) {
	_, h, err := s.TaskWithHistory(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	return h, nil
}

// HistoryLine reads line seq of a task's history, filed or still pending,
// in one strongly consistent Query of the lines from seq on and the task.
func (s *Store) HistoryLine(ctx context.Context, id string, seq int) (task.Event, error) {
	p, err := s.queryPartition(ctx, id, 0, historySK(seq))
	if err != nil {
		return task.Event{}, fmt.Errorf("history line %d of task %s: %w", seq, id, err)
	}
	for _, e := range p.history() {
		if e.Seq == seq {
			return e, nil
		}
	}
	return task.Event{}, fmt.Errorf("history line %d of task %s: %w", seq, id, team.ErrNotFound)
}

// TaskWithHistory reads a task and its history in one strongly consistent
// Query of the task's partition, which holds nothing else; the history
// merges the filed lines with those the task item still carries.
func (s *Store) TaskWithHistory(ctx context.Context, id string) (task.Task, []task.Event, error) {
	p, err := s.queryPartition(ctx, id, 0, "")
	if err != nil {
		return task.Task{}, nil, fmt.Errorf("task %s with history: %w", id, err)
	}
	if p.task == nil {
		return task.Task{}, nil, fmt.Errorf("task %s: %w", id, team.ErrNotFound)
	}
	return p.task.task(), p.history(), nil
}
