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

// Wake items, in the directory table:
//
//	hook     pk AGENT#<owner/agent>  sk WAKEHOOK                                   url, secret
//	attempt  pk WAKE#<task id>       sk ATTEMPT#<at>#<run id>#<attempt, 3 digits>  one try at waking
//
// The hook secret is stored as is: signing needs it. Attempts expire after
// WakeAttemptRetention (ttl), and sort by time within a task.
const (
	wakeHookSK    = "WAKEHOOK"
	attemptPrefix = "ATTEMPT#"
)

// WakeAttemptRetention is how long wake attempts stay readable.
const WakeAttemptRetention = 30 * 24 * time.Hour

func wakePK(taskID string) string { return "WAKE#" + taskID }

type wakeHookRecord struct {
	PK        string    `dynamodbav:"pk"`
	SK        string    `dynamodbav:"sk"`
	Type      string    `dynamodbav:"type"`
	Agent     string    `dynamodbav:"agent"`
	URL       string    `dynamodbav:"url"`
	Secret    string    `dynamodbav:"secret"`
	UpdatedAt time.Time `dynamodbav:"updated_at"`
}

type wakeAttemptRecord struct {
	PK         string    `dynamodbav:"pk"`
	SK         string    `dynamodbav:"sk"`
	Type       string    `dynamodbav:"type"`
	EventID    string    `dynamodbav:"event_id"`
	RunID      string    `dynamodbav:"run_id"`
	Agent      string    `dynamodbav:"agent"`
	TaskID     string    `dynamodbav:"task_id"`
	Reason     string    `dynamodbav:"reason"`
	Attempt    int       `dynamodbav:"attempt"`
	At         time.Time `dynamodbav:"at"`
	StatusCode int       `dynamodbav:"status_code,omitempty"`
	Error      string    `dynamodbav:"error,omitempty"`
	TTL        int64     `dynamodbav:"ttl"`
}

// PutWakeHook registers or replaces an agent's wake hook; the agent must
// exist (team.ErrNotFound otherwise), so a typo cannot register a hook no one uses.
func (s *Store) PutWakeHook(ctx context.Context, h wakeup.Hook) error {
	if err := h.Check(); err != nil {
		return fmt.Errorf("put wake hook: %w", err)
	}
	if h.UpdatedAt.IsZero() {
		h.UpdatedAt = time.Now()
	}
	item, err := marshalItem(wakeHookRecord{
		PK: agentPK(h.Agent), SK: wakeHookSK, Type: "wake_hook", Agent: h.Agent, URL: h.URL, Secret: h.Secret, UpdatedAt: h.UpdatedAt.UTC(),
	})
	if err != nil {
		return fmt.Errorf("put wake hook of %s: %w", h.Agent, err)
	}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		s.mustExist(agentPK(h.Agent)),
		{Put: &types.Put{TableName: aws.String(s.tables.Directory), Item: item}},
	}})
	if i, failed := failedCondition(err); failed && i == 0 {
		return fmt.Errorf("put wake hook: agent %s: %w", h.Agent, team.ErrNotFound)
	}
	if err != nil {
		return writeError("put wake hook of "+h.Agent, err)
	}
	return nil
}

// DeleteWakeHook removes an agent's wake hook, so its wake-ups are stored
// for pull instead; the agent must exist (team.ErrNotFound otherwise), and
// an agent already without a hook stays so.
func (s *Store) DeleteWakeHook(ctx context.Context, agent string) error {
	_, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		s.mustExist(agentPK(agent)),
		{Delete: &types.Delete{TableName: aws.String(s.tables.Directory), Key: directoryKey(agentPK(agent), wakeHookSK)}},
	}})
	if i, failed := failedCondition(err); failed && i == 0 {
		return fmt.Errorf("delete wake hook: agent %s: %w", agent, team.ErrNotFound)
	}
	if err != nil {
		return writeError("delete wake hook of "+agent, err)
	}
	return nil
}

// WakeHook reads an agent's hook; an agent without one is team.ErrNotFound.
// (Alike the directory's getters on purpose: getDirectoryItem is their shared part; each maps its own record.)
func (s *Store) WakeHook(ctx context.Context, agent string) (wakeup.Hook, error) {
	var r wakeHookRecord
	if err := s.getDirectoryItem(ctx, agentPK(agent), wakeHookSK, "wake hook of "+agent, &r); err != nil {
		return wakeup.Hook{}, err
	}
	return wakeup.Hook{Agent: r.Agent, URL: r.URL, Secret: r.Secret, UpdatedAt: r.UpdatedAt}, nil
}

// RecordWakeAttempt keeps one try at waking an agent for a task.
func (s *Store) RecordWakeAttempt(ctx context.Context, a wakeup.Attempt) error {
	at := a.At.UTC()
	item, err := marshalItem(wakeAttemptRecord{
		PK: wakePK(a.TaskID), SK: attemptPrefix + sortableTime(at) + "#" + a.RunID + "#" + fmt.Sprintf("%03d", a.Attempt),
		Type: "wake_attempt", EventID: a.EventID, RunID: a.RunID, Agent: a.Agent, TaskID: a.TaskID, Reason: a.Reason,
		Attempt: a.Attempt, At: at, StatusCode: a.StatusCode, Error: a.Error, TTL: at.Add(WakeAttemptRetention).Unix(),
	})
	if err != nil {
		return fmt.Errorf("record wake attempt %d of run %s: %w", a.Attempt, a.RunID, err)
	}
	if _, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.tables.Directory), Item: item}); err != nil {
		return fmt.Errorf("record wake attempt %d of run %s: %w", a.Attempt, a.RunID, err)
	}
	return nil
}

// WakeAttempts lists a task's wake attempts, oldest first.
func (s *Store) WakeAttempts(ctx context.Context, taskID string) ([]wakeup.Attempt, error) {
	in := &dynamodb.QueryInput{
		TableName:              aws.String(s.tables.Directory),
		KeyConditionExpression: aws.String("pk = :pk AND begins_with(sk, :prefix)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": stringValue(wakePK(taskID)), ":prefix": stringValue(attemptPrefix),
		},
		ConsistentRead: aws.Bool(true),
	}
	out, err := queryAll(ctx, s.db, in, func(r wakeAttemptRecord) wakeup.Attempt {
		return wakeup.Attempt{
			EventID: r.EventID, RunID: r.RunID, Agent: r.Agent, TaskID: r.TaskID, Reason: r.Reason,
			Attempt: r.Attempt, At: r.At, StatusCode: r.StatusCode, Error: r.Error,
		}
	})
	if err != nil {
		return nil, fmt.Errorf("wake attempts of task %s: %w", taskID, err)
	}
	return out, nil
}
