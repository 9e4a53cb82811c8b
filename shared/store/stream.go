package store

import (
	"fmt"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/useprickle/prickle/shared/step"
	"github.com/useprickle/prickle/shared/task"
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
	if r.TaskID == "" || r.StepID == "" {
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

// fromStreamValue converts one Lambda-event attribute value to the SDK's.
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
