package store

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Sign-in markers, in the directory table, make owners' sign-in links single use:
//
//	signin  pk SIGNIN#<nonce>  sk USED  used_at, ttl
//
// The first use puts the marker with attribute_not_exists(pk); a second use
// of the same link loses that condition. ttl lets DynamoDB drop the marker a
// day after the link expired (an expired link is refused by its signature's
// time anyway). No agent_id, so the by_agent index ignores them.
const signInSK = "USED"

type signInRecord struct {
	PK     string `dynamodbav:"pk"`
	SK     string `dynamodbav:"sk"`
	Type   string `dynamodbav:"type"`
	UsedAt string `dynamodbav:"used_at"`
	TTL    int64  `dynamodbav:"ttl"`
}

// UseSignIn records that the sign-in link with this nonce was used; first is
// false when it had been used before.
func (s *Store) UseSignIn(ctx context.Context, nonce string, expires time.Time) (bool, error) {
	if nonce == "" {
		return false, fmt.Errorf("use sign-in link: no nonce")
	}
	item, err := marshalItem(signInRecord{
		PK: "SIGNIN#" + nonce, SK: signInSK, Type: "signin",
		UsedAt: sortableTime(time.Now()), TTL: expires.Add(24 * time.Hour).Unix(),
	})
	if err != nil {
		return false, fmt.Errorf("use sign-in link: %w", err)
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:           aws.String(s.tables.Directory),
		Item:                item,
		ConditionExpression: aws.String("attribute_not_exists(pk)"),
	})
	if _, lost := failedCondition(err); lost {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("use sign-in link: %w", err)
	}
	return true, nil
}

// SignInLinksPerWindow bounds the sign-in links one owner name can be sent
// per SignInWindow, so the public form cannot flood an inbox or a channel.
const (
	SignInLinksPerWindow = 5
	SignInWindow         = 15 * time.Minute
)

// AllowSignInRequest counts a request for a sign-in link for owner in the
// current window and reports whether it is within the limit. It counts any
// name the form is given, so the answer tells nothing about who is an owner:
//
//	rate  pk SIGNINRATE#<owner>  sk <window start>  requests, ttl
func (s *Store) AllowSignInRequest(ctx context.Context, owner string, now time.Time) (bool, error) {
	window := now.UTC().Truncate(SignInWindow)
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.tables.Directory),
		Key:                       directoryKey("SIGNINRATE#"+owner, sortableTime(window)),
		UpdateExpression:          aws.String("ADD requests :one SET #type = :type, #ttl = :ttl"),
		ConditionExpression:       aws.String("attribute_not_exists(requests) OR requests < :max"),
		ExpressionAttributeNames:  map[string]string{"#type": "type", "#ttl": "ttl"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":one": numberValue(1), ":max": numberValue(SignInLinksPerWindow), ":type": stringValue("signin_rate"), ":ttl": numberValue(window.Add(SignInWindow + time.Hour).Unix())},
	})
	if _, limited := failedCondition(err); limited {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("count sign-in request for %s: %w", owner, err)
	}
	return true, nil
}
