package store

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/useprickle/prickle/shared/task"
	"github.com/useprickle/prickle/shared/team"
)

// A task and its history share the partition TASK#<id>: the task is the
// item with sk TASK, its history the items HIST#<seq> (see history.go).
const taskSK = "TASK"

func taskPK(id string) string { return "TASK#" + id }

// taskRecord is a task item. project, assignee, requester and created_key
// feed the by_project, by_assignee and by_requester indexes.
type taskRecord struct {
	PK               string           `dynamodbav:"pk"`
	SK               string           `dynamodbav:"sk"`
	Type             string           `dynamodbav:"type"`
	ID               string           `dynamodbav:"id"`
	Project          string           `dynamodbav:"project"`
	State            task.State       `dynamodbav:"state"`
	WaitingOn        *string          `dynamodbav:"waiting_on"`
	Requester        string           `dynamodbav:"requester"`
	Assignee         string           `dynamodbav:"assignee"`
	Packet           task.Packet      `dynamodbav:"packet"`
	Result           *task.Result     `dynamodbav:"result"`
	LatestCheckpoint *task.Checkpoint `dynamodbav:"latest_checkpoint"`
	CreatedAt        time.Time        `dynamodbav:"created_at"`
	UpdatedAt        time.Time        `dynamodbav:"updated_at"`
	CreatedKey       string           `dynamodbav:"created_key"`
	Version          int              `dynamodbav:"version"`
	// RequestedProject is the project while the task waits in requested,
	// absent otherwise: it keys the sparse by_requested index, so routing the
	// dependents of a completed task reads only the tasks still waiting.
	RequestedProject string `dynamodbav:"requested_project,omitempty"`
}

// createdKey orders a project's tasks by creation time and stays unique:
// fixed-width UTC millis, then the task id.
func createdKey(t task.Task) string {
	return sortableTime(t.CreatedAt) + "#" + t.ID
}

func newTaskRecord(t task.Task, version int) taskRecord {
	r := taskRecord{
		PK: taskPK(t.ID), SK: taskSK, Type: "task",
		ID: t.ID, Project: t.Project, State: t.State, WaitingOn: t.WaitingOn,
		Requester: t.Requester, Assignee: t.Assignee,
		Packet: t.Packet, Result: t.Result, LatestCheckpoint: t.LatestCheckpoint,
		CreatedAt: t.CreatedAt.UTC(), UpdatedAt: t.UpdatedAt.UTC(),
		CreatedKey: createdKey(t), Version: version,
	}
	if t.State == task.Requested {
		r.RequestedProject = t.Project
	}
	return r
}

func (r taskRecord) task() task.Task {
	return task.Task{
		ID: r.ID, Project: r.Project, State: r.State, WaitingOn: r.WaitingOn,
		Requester: r.Requester, Assignee: r.Assignee,
		Packet: r.Packet, Result: r.Result, LatestCheckpoint: r.LatestCheckpoint,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, Version: r.Version,
	}
}

func decodeTask(item map[string]types.AttributeValue) (task.Task, error) {
	var r taskRecord
	if err := unmarshalItem(item, &r); err != nil {
		return task.Task{}, err
	}
	return r.task(), nil
}

// Task reads a task (strongly consistent, so a caller sees its own writes).
func (s *Store) Task(ctx context.Context, id string) (task.Task, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(s.tables.Tasks),
		Key:            map[string]types.AttributeValue{"pk": stringValue(taskPK(id)), "sk": stringValue(taskSK)},
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return task.Task{}, fmt.Errorf("get task %s: %w", id, err)
	}
	if out.Item == nil {
		return task.Task{}, fmt.Errorf("task %s: %w", id, team.ErrNotFound)
	}
	t, err := decodeTask(out.Item)
	if err != nil {
		return task.Task{}, fmt.Errorf("task %s: %w", id, err)
	}
	return t, nil
}

// CreateTask stores a new task as version 1 together with its first history
// line, in one transaction; an existing task with that id is ErrConflict.
func (s *Store) CreateTask(ctx context.Context, t task.Task, first task.Event) error {
	items, err := s.moveWrites(t, first, 0)
	if err != nil {
		return fmt.Errorf("create task %s: %w", t.ID, err)
	}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	if err != nil {
		return writeError("create task "+t.ID, err)
	}
	return nil
}

// ApplyMove stores m.Task as version prevVersion+1 and appends m.Event as
// history line prevVersion+1, in one transaction conditioned on the stored
// version: of racing moves from the same version exactly one lands, the
// others get ErrConflict and write nothing.
func (s *Store) ApplyMove(ctx context.Context, prevVersion int, m task.Move) error {
	if prevVersion < 1 {
		return fmt.Errorf("move task %s: previous version %d is not a stored version", m.Task.ID, prevVersion)
	}
	items, err := s.moveWrites(m.Task, m.Event, prevVersion)
	if err != nil {
		return fmt.Errorf("move task %s: %w", m.Task.ID, err)
	}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	if err != nil {
		return writeError(fmt.Sprintf("move task %s from version %d", m.Task.ID, prevVersion), err)
	}
	return nil
}

// moveWrites are the two writes of a task transition: the task at version
// prevVersion+1, only if it is still at prevVersion (or, for prevVersion 0,
// does not exist yet), and its history line, only if that line is new.
// SaveSteps adds them to its own transaction.
func (s *Store) moveWrites(t task.Task, e task.Event, prevVersion int) ([]types.TransactWriteItem, error) {
	if t.ID == "" {
		return nil, fmt.Errorf("task has no id")
	}
	version := prevVersion + 1
	taskItem, err := marshalItem(newTaskRecord(t, version))
	if err != nil {
		return nil, err
	}
	eventItem, err := marshalItem(newEventRecord(t.ID, version, e))
	if err != nil {
		return nil, err
	}

	put := &types.Put{TableName: aws.String(s.tables.Tasks), Item: taskItem}
	if prevVersion == 0 {
		put.ConditionExpression = aws.String("attribute_not_exists(pk)")
	} else {
		put.ConditionExpression = aws.String("#version = :prev")
		put.ExpressionAttributeNames = map[string]string{"#version": "version"}
		put.ExpressionAttributeValues = map[string]types.AttributeValue{":prev": numberValue(int64(prevVersion))}
	}
	return []types.TransactWriteItem{
		{Put: put},
		{Put: &types.Put{
			TableName:           aws.String(s.tables.Tasks),
			Item:                eventItem,
			ConditionExpression: aws.String("attribute_not_exists(pk)"),
		}},
	}, nil
}
