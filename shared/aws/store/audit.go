package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/useprickle/prickle/shared/domain/audit"
)

// A project's audit trail lives in the tasks table, one item per entry:
//
//	audit  pk AUDIT#<project>  sk <at, sortable>#<key>
//
// Each is put once, on the condition that it is new, and nothing in
// Prickle updates or deletes one; the items carry no ttl and none of the
// index attributes, so the task indexes stay as they are.
func auditPK(project string) string { return "AUDIT#" + project }

type auditRecord struct {
	PK      string    `dynamodbav:"pk"`
	SK      string    `dynamodbav:"sk"`
	Type    string    `dynamodbav:"type"`
	At      time.Time `dynamodbav:"at"`
	Proj    string    `dynamodbav:"audit_project"`
	Action  string    `dynamodbav:"action"`
	Actor   string    `dynamodbav:"actor"`
	Via     string    `dynamodbav:"via"`
	TaskID  string    `dynamodbav:"task_id,omitempty"`
	StepID  string    `dynamodbav:"step_id,omitempty"`
	GrantID string    `dynamodbav:"grant_id,omitempty"`
	Tool    string    `dynamodbav:"tool,omitempty"`
	Detail  string    `dynamodbav:"detail,omitempty"`
	Key     string    `dynamodbav:"key"`
}

func newAuditRecord(e audit.Entry) auditRecord {
	return auditRecord{
		PK: auditPK(e.Project), SK: sortableTime(e.At) + "#" + e.Key, Type: "audit", At: e.At.UTC(), Proj: e.Project,
		Action: e.Action, Actor: e.Actor, Via: e.Via, TaskID: e.TaskID, StepID: e.StepID, GrantID: e.GrantID,
		Tool: e.Tool, Detail: e.Detail, Key: e.Key,
	}
}

func (r auditRecord) entry() audit.Entry {
	return audit.Entry{At: r.At, Project: r.Proj, Action: r.Action, Actor: r.Actor, Via: r.Via, TaskID: r.TaskID,
		StepID: r.StepID, GrantID: r.GrantID, Tool: r.Tool, Detail: r.Detail, Key: r.Key}
}

// auditPut is the conditional put of one entry, for a transaction or alone.
func (s *Store) auditPut(e audit.Entry) (*types.Put, error) {
	if e.Project == "" || e.Key == "" {
		return nil, fmt.Errorf("audit entry %s needs a project and a key", e.Action)
	}
	item, err := marshalItem(newAuditRecord(e))
	if err != nil {
		return nil, err
	}
	return &types.Put{TableName: aws.String(s.tables.Tasks), Item: item, ConditionExpression: aws.String("attribute_not_exists(pk)")}, nil
}

// AppendAudit stores each entry once; an entry already stored (the same
// time and key: a retried write) is left as it is and is not an error.
func (s *Store) AppendAudit(ctx context.Context, entries ...audit.Entry) error {
	for _, e := range entries {
		put, err := s.auditPut(e)
		if err != nil {
			return fmt.Errorf("append audit: %w", err)
		}
		_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: put.TableName, Item: put.Item, ConditionExpression: put.ConditionExpression})
		var exists *types.ConditionalCheckFailedException
		if err != nil && !errors.As(err, &exists) {
			return fmt.Errorf("append audit %s of %s: %w", e.Action, e.Project, err)
		}
	}
	return nil
}

// ProjectAudit reads a project's whole trail in time order.
func (s *Store) ProjectAudit(ctx context.Context, project string) ([]audit.Entry, error) {
	entries, err := queryAll(ctx, s.db, partitionQuery(s.tables.Tasks, auditPK(project)), auditRecord.entry)
	if err != nil {
		return nil, fmt.Errorf("audit of %s: %w", project, err)
	}
	return entries, nil
}
