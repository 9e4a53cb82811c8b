package store

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// What notify keeps in the directory table:
//
//	Slack message ref  pk MSG#<task>#<step id or RESULT>  sk SLACK     (channel, ts: chat.update edits it in place)
//	sent marker        pk SENT#<event id>                 sk <channel> (email or slack: that event was sent there)
//
// Neither carries agent_id with created_at, so the by_agent index stays tokens only.
const (
	slackSK = "SLACK"
	// ResultSubject names a task's result where a step id would name a step.
	ResultSubject = "RESULT"
	// SentRetention is how long a sent marker is kept (its ttl, should the
	// table's TTL be enabled): longer than EventBridge retries an event (24 h).
	SentRetention = 7 * 24 * time.Hour
)

func messagePK(taskID, subject string) string { return "MSG#" + taskID + "#" + subject }
func sentPK(eventID string) string            { return "SENT#" + eventID }

type slackRefRecord struct {
	PK        string `dynamodbav:"pk"`
	SK        string `dynamodbav:"sk"`
	Type      string `dynamodbav:"type"`
	TaskID    string `dynamodbav:"task_id"`
	Subject   string `dynamodbav:"subject"`
	Channel   string `dynamodbav:"channel"`
	TS        string `dynamodbav:"ts"`
	UpdatedAt string `dynamodbav:"updated_at"`
}

type sentRecord struct {
	PK      string `dynamodbav:"pk"`
	SK      string `dynamodbav:"sk"`
	Type    string `dynamodbav:"type"`
	EventID string `dynamodbav:"event_id"`
	Channel string `dynamodbav:"channel"`
	SentAt  string `dynamodbav:"sent_at"`
	TTL     int64  `dynamodbav:"ttl"`
	// Claim names the claiming call, so that call's own write, retried by
	// the SDK after its first attempt landed unanswered, is still its claim.
	Claim string `dynamodbav:"claim"`
}

// PutSlackRef remembers the Slack message that asked about a step (subject
// = step id) or a result (subject = ResultSubject), so a decision or an
// expiry updates that message in place; a later message replaces it.
func (s *Store) PutSlackRef(ctx context.Context, taskID, subject, channel, ts string) error {
	if taskID == "" || subject == "" || channel == "" || ts == "" {
		return fmt.Errorf("put slack message ref: task, subject, channel and ts are all needed")
	}
	return s.putDirectoryItem(ctx, "slack message of "+taskID+" "+subject, slackRefRecord{
		PK: messagePK(taskID, subject), SK: slackSK, Type: "slack_message", TaskID: taskID, Subject: subject,
		Channel: channel, TS: ts, UpdatedAt: sortableTime(time.Now()),
	})
}

// SlackRef finds the Slack message of a step or result: its channel and ts,
// or team.ErrNotFound when none was posted.
func (s *Store) SlackRef(ctx context.Context, taskID, subject string) (channel, ts string, err error) {
	var r slackRefRecord
	if err := s.getDirectoryItem(ctx, messagePK(taskID, subject), slackSK, "slack message of "+taskID+" "+subject, &r); err != nil {
		return "", "", err
	}
	return r.Channel, r.TS, nil
}

// ClaimSend records, once, that an event's message goes out on a channel:
// true for the first caller, false (and no error) when it was claimed before,
// so a redelivered event sends nothing twice. The claim carries a random id
// its condition accepts, so a retry of this call's own write that had landed
// (its answer lost) is still this call's claim, not another's: without it,
// that message was never sent.
func (s *Store) ClaimSend(ctx context.Context, eventID, channel string, now time.Time) (bool, error) {
	if eventID == "" || channel == "" {
		return false, fmt.Errorf("claim send: event id and channel are needed")
	}
	claim, err := newWriteID()
	if err != nil {
		return false, fmt.Errorf("claim %s send of %s: %w", channel, eventID, err)
	}
	item, err := marshalItem(sentRecord{
		PK: sentPK(eventID), SK: channel, Type: "sent", EventID: eventID, Channel: channel,
		SentAt: sortableTime(now), TTL: now.Add(SentRetention).Unix(), Claim: claim,
	})
	if err != nil {
		return false, fmt.Errorf("claim %s send of %s: %w", channel, eventID, err)
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                 aws.String(s.tables.Directory),
		Item:                      item,
		ConditionExpression:       aws.String("attribute_not_exists(pk) OR claim = :claim"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":claim": &types.AttributeValueMemberS{Value: claim}},
	})
	if _, lost := failedCondition(err); lost {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("claim %s send of %s: %w", channel, eventID, err)
	}
	return true, nil
}

// ReleaseSend forgets a claim whose send failed, so the event's retry sends it.
func (s *Store) ReleaseSend(ctx context.Context, eventID, channel string) error {
	_, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: aws.String(s.tables.Directory),
		Key:       directoryKey(sentPK(eventID), channel),
	})
	if err != nil {
		return fmt.Errorf("release %s send of %s: %w", channel, eventID, err)
	}
	return nil
}
