package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/team"
)

// A task and its history share the partition TASK#<id>: the task is the
// item with sk TASK, its history the items HIST#<seq> (see history.go).
const (
	taskSK       = "TASK"
	taskPKPrefix = "TASK#"
)

func taskPK(id string) string { return taskPKPrefix + id }

// taskRecord is a task item. project, assignee, requester and created_key
// feed the by_project, by_assignee and by_requester indexes. The id is
// pk's and the creation time created_key's, so neither is stored again;
// nested values are stored compactly (taskcodec.go).
// It stays its own struct: its names and shapes differ from the task's json (no id, no created_at, short nested names).
type taskRecord struct {
	PK               string            `dynamodbav:"pk"`
	SK               string            `dynamodbav:"sk"`
	Project          string            `dynamodbav:"project"`
	State            task.State        `dynamodbav:"state"`
	WaitingOn        *string           `dynamodbav:"waiting_on,omitempty"`
	Requester        string            `dynamodbav:"requester"`
	Assignee         string            `dynamodbav:"assignee"`
	Packet           storedPacket      `dynamodbav:"packet"`
	Result           *storedResult     `dynamodbav:"result,omitempty"`
	LatestCheckpoint *storedCheckpoint `dynamodbav:"latest_checkpoint,omitempty"`
	UpdatedAt        time.Time         `dynamodbav:"updated_at"`
	CreatedKey       string            `dynamodbav:"created_key"`
	Version          int               `dynamodbav:"version"`
	// CreatedAt is read from items stored before created_key alone held it.
	CreatedAt *time.Time `dynamodbav:"created_at,omitempty"`
	// RequestedProject is the project while the task waits in requested,
	// absent otherwise: it keys the sparse by_requested index, so routing the
	// dependents of a completed task reads only the tasks still waiting.
	RequestedProject string `dynamodbav:"requested_project,omitempty"`
	// Pending is the history lines not yet known to be filed as HIST items,
	// the newest (this version's) always among them; see pending.go.
	Pending pendingLines `dynamodbav:"pending,omitempty"`
}

// createdKey orders a project's tasks by creation time and stays unique:
// fixed-width UTC millis, then the task id.
func createdKey(t task.Task) string {
	return sortableTime(t.CreatedAt) + "#" + t.ID
}

func newTaskRecord(t task.Task, version int) taskRecord {
	r := taskRecord{
		PK: taskPK(t.ID), SK: taskSK,
		Project: t.Project, State: t.State, WaitingOn: t.WaitingOn,
		Requester: t.Requester, Assignee: t.Assignee,
		Packet: storedPacket(t.Packet), Result: (*storedResult)(t.Result), LatestCheckpoint: (*storedCheckpoint)(t.LatestCheckpoint),
		UpdatedAt: t.UpdatedAt.UTC(), CreatedKey: createdKey(t), Version: version,
	}
	if t.State == task.Requested {
		r.RequestedProject = t.Project
	}
	return r
}

// id is the task's id, the tail of its pk.
func (r taskRecord) id() string { return strings.TrimPrefix(r.PK, taskPKPrefix) }

func (r taskRecord) task() task.Task {
	t := task.Task{
		ID: r.id(), Project: r.Project, State: r.State, WaitingOn: r.WaitingOn,
		Requester: r.Requester, Assignee: r.Assignee,
		Packet: task.Packet(r.Packet), Result: (*task.Result)(r.Result), LatestCheckpoint: (*task.Checkpoint)(r.LatestCheckpoint),
		UpdatedAt: r.UpdatedAt, Version: r.Version,
	}
	if r.CreatedAt != nil {
		t.CreatedAt = *r.CreatedAt
	} else if at, _, ok := strings.Cut(r.CreatedKey, "#"); ok {
		t.CreatedAt = sortableParsed(at)
	}
	return t
}

func decodeTask(item map[string]types.AttributeValue) (task.Task, error) {
	var r taskRecord
	if err := unmarshalItem(item, &r); err != nil {
		return task.Task{}, err
	}
	return r.task(), nil
}

// Task reads a task (strongly consistent, so a caller sees its own writes)
// in one Query of its partition, newest first: the task item and its newest
// filed lines, so that the move which follows knows, without another read,
// which lines the item carries that are filed already.
func (s *Store) Task(ctx context.Context, id string) (task.Task, error) {
	p, err := s.queryPartition(ctx, id, 1+maxPending, "")
	if err != nil {
		return task.Task{}, fmt.Errorf("get task %s: %w", id, err)
	}
	if p.task == nil {
		return task.Task{}, fmt.Errorf("task %s: %w", id, team.ErrNotFound)
	}
	s.reads.put(id, readOf(p))
	return p.task.task(), nil
}

// readOf is what a newest-first read of a partition tells a move.
func readOf(p partition) taskRead {
	filed := make(map[int]bool, len(p.filed))
	for _, l := range p.filed {
		filed[l.Seq] = true
	}
	return taskRead{version: p.task.Version, pending: p.task.Pending, filed: filed}
}

// CreateTask stores a new task as version 1 carrying its first history
// line, in one conditional write; an existing task with that id is
// ErrConflict, unless it is this very write, retried after its answer was lost.
func (s *Store) CreateTask(ctx context.Context, t task.Task, first task.Event) error {
	plan, err := s.planMove(ctx, t, first, 0)
	if err != nil {
		return fmt.Errorf("create task %s: %w", t.ID, err)
	}
	err = s.writeMove(ctx, plan)
	if _, lost := failedCondition(err); lost {
		if landed, rerr := s.landed(ctx, t.ID, 1, plan.move); rerr == nil && landed {
			return nil
		}
	}
	if err != nil {
		return writeError("create task "+t.ID, err)
	}
	return nil
}

// ApplyMove stores m.Task as version prevVersion+1 carrying m.Event as
// history line prevVersion+1, in one write conditioned on the stored
// version: of racing moves from the same version exactly one lands, the
// others get ErrConflict and write nothing. A write whose answer was lost
// and whose retry then found its own move stored is a success.
func (s *Store) ApplyMove(ctx context.Context, prevVersion int, m task.Move) error {
	if prevVersion < 1 {
		return fmt.Errorf("move task %s: previous version %d is not a stored version", m.Task.ID, prevVersion)
	}
	op := fmt.Sprintf("move task %s from version %d", m.Task.ID, prevVersion)
	plan, err := s.planMove(ctx, m.Task, m.Event, prevVersion)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	err = s.writeMove(ctx, plan)
	if err == nil {
		return nil
	}
	if _, lost := failedCondition(err); lost {
		landed, rerr := s.landed(ctx, m.Task.ID, prevVersion+1, plan.move)
		if rerr != nil {
			return fmt.Errorf("%s: %w (and reading it again: %v)", op, team.ErrConflict, rerr)
		}
		if landed {
			return nil
		}
	}
	return writeError(op, err)
}

// movePlan is the writes of one move: put, the task item at its new version
// (conditioned on the version it moves from), and files, the puts of the
// lines it no longer carries when it would carry more than maxPending.
type movePlan struct {
	put   *types.Put
	files []types.TransactWriteItem
	move  string // the move's id, on its line
}

// writeMove sends a plan: a lone conditional PutItem, or a transaction when
// it files lines too.
func (s *Store) writeMove(ctx context.Context, plan movePlan) error {
	if len(plan.files) > 0 {
		_, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: append(plan.files, types.TransactWriteItem{Put: plan.put})})
		return err
	}
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: plan.put.TableName, Item: plan.put.Item, ConditionExpression: plan.put.ConditionExpression,
		ExpressionAttributeNames: plan.put.ExpressionAttributeNames, ExpressionAttributeValues: plan.put.ExpressionAttributeValues,
	})
	return err
}

// planMove builds the writes of a task transition: the task at version
// prevVersion+1, only if it is still at prevVersion (or, for prevVersion 0,
// does not exist yet), carrying the lines of prevVersion not seen filed and
// its own. It knows them from the read the move started from (Task), or
// reads the task again; a task no longer at prevVersion is ErrConflict.
// SaveSteps adds the writes to its own transaction.
func (s *Store) planMove(ctx context.Context, t task.Task, e task.Event, prevVersion int) (movePlan, error) {
	if t.ID == "" {
		return movePlan{}, fmt.Errorf("task has no id")
	}
	var carried []lineRecord
	if prevVersion > 0 {
		tr, ok := s.reads.get(t.ID, prevVersion)
		if !ok {
			p, err := s.queryPartition(ctx, t.ID, 1+maxPending, "")
			if err != nil {
				return movePlan{}, fmt.Errorf("read task: %w", err)
			}
			if p.task == nil || p.task.Version != prevVersion {
				return movePlan{}, fmt.Errorf("task is not at version %d: %w", prevVersion, team.ErrConflict)
			}
			tr = readOf(p)
		}
		carried = tr.unfiled()
	}
	move, err := newWriteID()
	if err != nil {
		return movePlan{}, err
	}
	var plan movePlan
	plan.move = move
	if len(carried)+1 > maxPending {
		// The filer is behind: file the carried lines here (a put of a line
		// is the same item whoever files it, so no condition is needed).
		for _, l := range carried {
			item, err := marshalItem(newEventRecord(t.ID, l))
			if err != nil {
				return movePlan{}, err
			}
			plan.files = append(plan.files, types.TransactWriteItem{Put: &types.Put{TableName: aws.String(s.tables.Tasks), Item: item}})
		}
		carried = nil
	}
	version := prevVersion + 1
	r := newTaskRecord(t, version)
	r.Pending = append(carried, newLineRecord(version, move, e))
	taskItem, err := marshalItem(r)
	if err != nil {
		return movePlan{}, err
	}
	plan.put = &types.Put{TableName: aws.String(s.tables.Tasks), Item: taskItem}
	if prevVersion == 0 {
		plan.put.ConditionExpression = aws.String("attribute_not_exists(pk)")
	} else {
		plan.put.ConditionExpression = aws.String("#version = :prev")
		plan.put.ExpressionAttributeNames = map[string]string{"#version": "version"}
		plan.put.ExpressionAttributeValues = map[string]types.AttributeValue{":prev": numberValue(int64(prevVersion))}
	}
	return plan, nil
}

// landed reports whether history line seq of a task is the given move's:
// the move's write landed although it was answered as a lost condition (a
// retry of a write whose first answer was lost).
func (s *Store) landed(ctx context.Context, id string, seq int, move string) (bool, error) {
	p, err := s.queryPartition(ctx, id, 1+maxPending, "")
	if err != nil {
		return false, err
	}
	if p.task == nil || p.task.Version < seq {
		return false, nil
	}
	for _, l := range append(p.filed, p.task.Pending...) {
		if l.Seq == seq {
			return l.Move == move, nil
		}
	}
	return false, nil
}
