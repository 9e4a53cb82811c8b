package store

import (
	"context"
	"fmt"
	"slices"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/domain/task"
)

// StepFromImage decodes a steps-table item as a DynamoDB stream record
// carries it (a Lambda event's OldImage or NewImage) with the same codec as
// the table, so the step-expiry function reads exactly what was stored.
func StepFromImage(image map[string]events.DynamoDBAttributeValue) (step.Step, error) {
	item, err := fromStreamImage(image)
	if err != nil {
		return step.Step{}, fmt.Errorf("step from stream image: %w", err)
	}
	var r stepRecord
	if err := unmarshalItem(item, &r); err != nil {
		return step.Step{}, fmt.Errorf("step from stream image: %w", err)
	}
	if r.TaskID == "" || r.ID == "" {
		return step.Step{}, fmt.Errorf("step from stream image: no task_id or step_id")
	}
	return r.step(), nil
}

func fromStreamImage(image map[string]events.DynamoDBAttributeValue) (map[string]types.AttributeValue, error) {
	out := make(map[string]types.AttributeValue, len(image))
	for k, v := range image {
		av, err := fromStreamValue(v)
		if err != nil {
			return nil, fmt.Errorf("attribute %s: %w", k, err)
		}
		out[k] = av
	}
	return out, nil
}

// fromStreamValue converts one Lambda-event attribute value to the SDK's,
// one case per kind of value: the two SDKs share no value type and convert
// none of each other's (storetest's lambdaValue is the other way).
func fromStreamValue(v events.DynamoDBAttributeValue) (types.AttributeValue, error) {
	switch v.DataType() {
	case events.DataTypeString:
		return &types.AttributeValueMemberS{Value: v.String()}, nil
	case events.DataTypeNumber:
		return &types.AttributeValueMemberN{Value: v.Number()}, nil
	case events.DataTypeBoolean:
		return &types.AttributeValueMemberBOOL{Value: v.Boolean()}, nil
	case events.DataTypeNull:
		return &types.AttributeValueMemberNULL{Value: true}, nil
	case events.DataTypeBinary:
		return &types.AttributeValueMemberB{Value: v.Binary()}, nil
	case events.DataTypeStringSet:
		return &types.AttributeValueMemberSS{Value: v.StringSet()}, nil
	case events.DataTypeNumberSet:
		return &types.AttributeValueMemberNS{Value: v.NumberSet()}, nil
	case events.DataTypeBinarySet:
		return &types.AttributeValueMemberBS{Value: v.BinarySet()}, nil
	case events.DataTypeList:
		list := v.List()
		out := make([]types.AttributeValue, len(list))
		for i, e := range list {
			av, err := fromStreamValue(e)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			out[i] = av
		}
		return &types.AttributeValueMemberL{Value: out}, nil
	case events.DataTypeMap:
		m, err := fromStreamImage(v.Map())
		if err != nil {
			return nil, err
		}
		return &types.AttributeValueMemberM{Value: m}, nil
	}
	return nil, fmt.Errorf("unknown attribute type %d", v.DataType())
}

// TaskFromImage decodes a tasks-table task item as a DynamoDB stream record
// carries it, with the table's codec; ok is false for the table's other
// items (history lines, grants, budgets, the audit trail), which share it.
func TaskFromImage(image map[string]events.DynamoDBAttributeValue) (t task.Task, ok bool, err error) {
	if sk, found := image["sk"]; !found || sk.DataType() != events.DataTypeString || sk.String() != taskSK {
		return task.Task{}, false, nil
	}
	item, err := fromStreamImage(image)
	if err != nil {
		return task.Task{}, false, fmt.Errorf("task from stream image: %w", err)
	}
	t, err = decodeTask(item)
	if err != nil {
		return task.Task{}, false, fmt.Errorf("task from stream image: %w", err)
	}
	if t.ID == "" || t.Version < 1 {
		return task.Task{}, false, fmt.Errorf("task from stream image: no id or version")
	}
	return t, true, nil
}

// Line is a history line a task item carries, as its stream record shows
// it, on its way to being filed as the task's HIST item.
type Line struct {
	TaskID string
	rec    lineRecord
}

// Event is the line as history shows it.
func (l Line) Event() task.Event { return l.rec.event() }

// AddedLines returns the lines a task item's stream record adds: those its
// new image carries and its old one did not, oldest first. Lines the old
// image carried were added, and filed, by an earlier record of the item.
// Records of the table's other items add none.
func AddedLines(r events.DynamoDBEventRecord) ([]Line, error) {
	cur, ok, err := imageLines(r.Change.NewImage)
	if err != nil || !ok {
		return nil, err
	}
	old, _, err := imageLines(r.Change.OldImage)
	if err != nil {
		return nil, err
	}
	had := make(map[int]bool, len(old.Pending))
	for _, l := range old.Pending {
		had[l.Seq] = true
	}
	var out []Line
	for _, l := range cur.Pending {
		if !had[l.Seq] {
			out = append(out, Line{TaskID: cur.id(), rec: l})
		}
	}
	slices.SortFunc(out, func(a, b Line) int { return a.rec.Seq - b.rec.Seq })
	return out, nil
}

// imageLines decodes a task item's image for its pending lines; ok is false
// for an image that is not a task item (or no image).
func imageLines(image map[string]events.DynamoDBAttributeValue) (taskRecord, bool, error) {
	if sk, found := image["sk"]; !found || sk.DataType() != events.DataTypeString || sk.String() != taskSK {
		return taskRecord{}, false, nil
	}
	item, err := fromStreamImage(image)
	if err != nil {
		return taskRecord{}, false, fmt.Errorf("lines from stream image: %w", err)
	}
	var r taskRecord
	if err := unmarshalItem(item, &r); err != nil {
		return taskRecord{}, false, fmt.Errorf("lines from stream image: %w", err)
	}
	return r, true, nil
}

// FileLine stores a line as its task's HIST item unless that item exists
// (a stream batch delivered again): filing is idempotent, and a line once
// filed is never rewritten.
func (s *Store) FileLine(ctx context.Context, l Line) error {
	item, err := marshalItem(newEventRecord(l.TaskID, l.rec))
	if err != nil {
		return fmt.Errorf("file line %d of task %s: %w", l.rec.Seq, l.TaskID, err)
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:           aws.String(s.tables.Tasks),
		Item:                item,
		ConditionExpression: aws.String("attribute_not_exists(sk)"),
	})
	if _, filed := failedCondition(err); err != nil && !filed {
		return fmt.Errorf("file line %d of task %s: %w", l.rec.Seq, l.TaskID, err)
	}
	return nil
}
