package store

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/useprickle/prickle/shared/domain/pulse"
)

// PutPulse replaces the agent's entry in its project: Team Pulse keeps only
// the latest report, so the last writer wins.
func (s *Store) PutPulse(ctx context.Context, e pulse.Entry) error {
	item, err := pulseItem(e)
	if err != nil {
		return err
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.tables.Pulse), Item: item})
	if err != nil {
		return fmt.Errorf("put pulse of %s in %s: %w", e.AgentID, e.Project, err)
	}
	return nil
}

// PutTaskPulse replaces the agent's entry only if the task it names is in
// its project: one transaction of the put and a condition check on the task
// item, instead of a read of the task before the put (one round trip less,
// billed 2 × 1 WRU for the put and 2 × 1 WRU for the check). A failed check
// (no such task, or another project's) writes nothing and is team.ErrConflict.
func (s *Store) PutTaskPulse(ctx context.Context, e pulse.Entry) error {
	if e.TaskID == nil {
		return fmt.Errorf("put pulse of %s in %s: no task named", e.AgentID, e.Project)
	}
	item, err := pulseItem(e)
	if err != nil {
		return err
	}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: aws.String(s.tables.Pulse), Item: item}},
		{ConditionCheck: &types.ConditionCheck{
			TableName:                 aws.String(s.tables.Tasks),
			Key:                       map[string]types.AttributeValue{"pk": stringValue(taskPK(*e.TaskID)), "sk": stringValue(taskSK)},
			ConditionExpression:       aws.String("#project = :p"),
			ExpressionAttributeNames:  map[string]string{"#project": "project"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":p": stringValue(e.Project)},
		}},
	}})
	if err != nil {
		return writeError(fmt.Sprintf("put pulse of %s in %s on task %s", e.AgentID, e.Project, *e.TaskID), err)
	}
	return nil
}

// pulseItem is one agent's latest report in one project, keyed (project,
// agent_id): the entry itself under its json names, its time in UTC.
func pulseItem(e pulse.Entry) (map[string]types.AttributeValue, error) {
	e.UpdatedAt = e.UpdatedAt.UTC()
	item, err := marshalItem(e)
	if err != nil {
		return nil, fmt.Errorf("put pulse of %s in %s: %w", e.AgentID, e.Project, err)
	}
	return item, nil
}

// Pulse returns every entry of a project, by agent id, strongly consistent.
func (s *Store) Pulse(ctx context.Context, project string) ([]pulse.Entry, error) {
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(s.tables.Pulse),
		KeyConditionExpression:    aws.String("#project = :p"),
		ExpressionAttributeNames:  map[string]string{"#project": "project"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": stringValue(project)},
		ConsistentRead:            aws.Bool(true),
	}
	entries, err := queryAll(ctx, s.db, in, func(e pulse.Entry) pulse.Entry { return e })
	if err != nil {
		return nil, fmt.Errorf("pulse of %s: %w", project, err)
	}
	return entries, nil
}
