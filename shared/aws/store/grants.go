package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/useprickle/prickle/shared/domain/grant"
	"github.com/useprickle/prickle/shared/team"
)

// Owners' standing grants live in the tasks table, one partition per project:
//
//	grant  pk GRANTS#<project>  sk <grant id>   uses (counted, once_* the uses' own ids), revoked_at (revoke_id), ttl
//
// ttl is the grant's expiry plus GrantRetention, so an expired grant stays
// listed for a while and then DynamoDB drops it; a live read never trusts
// ttl (deletion lags) but compares expires_at itself.
const GrantRetention = 7 * 24 * time.Hour

func grantsPK(project string) string { return "GRANTS#" + project }

// grantRecord stays its own struct: items store the grant's id as id and its project as grant_project (json: grant_id, project).
type grantRecord struct {
	PK          string      `dynamodbav:"pk"`
	SK          string      `dynamodbav:"sk"`
	Type        string      `dynamodbav:"type"`
	ID          string      `dynamodbav:"id"`
	Proj        string      `dynamodbav:"grant_project"`
	Owner       string      `dynamodbav:"owner"`
	Agent       string      `dynamodbav:"agent"`
	Scope       grant.Scope `dynamodbav:"scope"`
	TaskID      string      `dynamodbav:"task_id,omitempty"`
	Fingerprint string      `dynamodbav:"fingerprint,omitempty"`
	ToolName    string      `dynamodbav:"tool_name"`
	Input       string      `dynamodbav:"input,omitempty"`
	Field       string      `dynamodbav:"field,omitempty"`
	Pattern     string      `dynamodbav:"pattern,omitempty"`
	FromStep    string      `dynamodbav:"from_step,omitempty"`
	CreatedAt   time.Time   `dynamodbav:"created_at"`
	ExpiresAt   time.Time   `dynamodbav:"expires_at"`
	ExpiresUnix int64       `dynamodbav:"expires_unix"`
	RevokedAt   *time.Time  `dynamodbav:"revoked_at,omitempty"`
	RevokedBy   string      `dynamodbav:"revoked_by,omitempty"`
	Uses        int         `dynamodbav:"uses"`
	TTL         int64       `dynamodbav:"ttl"`
}

func (r grantRecord) grant() grant.Grant {
	return grant.Grant{
		ID: r.ID, Project: r.Proj, Owner: r.Owner, Agent: r.Agent, Scope: r.Scope, TaskID: r.TaskID,
		Fingerprint: r.Fingerprint, ToolName: r.ToolName, Input: json.RawMessage(r.Input), Field: r.Field, Pattern: r.Pattern,
		FromStep: r.FromStep, CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt, RevokedAt: r.RevokedAt, RevokedBy: r.RevokedBy, Uses: r.Uses,
	}
}

func grantKey(project, id string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": stringValue(grantsPK(project)), "sk": stringValue(id)}
}

// PutGrant stores a new grant; a grant with its id already stored is ErrConflict.
func (s *Store) PutGrant(ctx context.Context, g grant.Grant) error {
	r := grantRecord{
		PK: grantsPK(g.Project), SK: g.ID, Type: "grant", ID: g.ID, Proj: g.Project, Owner: g.Owner, Agent: g.Agent,
		Scope: g.Scope, TaskID: g.TaskID, Fingerprint: g.Fingerprint, ToolName: g.ToolName, Input: string(g.Input),
		Field: g.Field, Pattern: g.Pattern, FromStep: g.FromStep, CreatedAt: g.CreatedAt.UTC(), ExpiresAt: g.ExpiresAt.UTC(),
		ExpiresUnix: g.ExpiresAt.UnixMilli(), Uses: g.Uses, TTL: g.ExpiresAt.Add(GrantRetention).Unix(),
	}
	return s.putNewRecord(ctx, s.tables.Tasks, "put grant "+g.ID, r)
}

// ProjectGrants lists the project's stored grants in id order, strongly consistent.
func (s *Store) ProjectGrants(ctx context.Context, project string) ([]grant.Grant, error) {
	grants, err := queryAll(ctx, s.db, partitionQuery(s.tables.Tasks, grantsPK(project)), grantRecord.grant)
	if err != nil {
		return nil, fmt.Errorf("grants of %s: %w", project, err)
	}
	return grants, nil
}

// UseGrant counts one use in a single conditional update: the grant must
// exist, be unrevoked and not yet expired at now. Of a use racing a
// revocation, either the use lands first or it fails; never both. The use
// carries its own id (onceWrite), so the SDK's retry of a use whose answer
// was lost counts nothing more and answers the use that landed.
func (s *Store) UseGrant(ctx context.Context, project, id string, now time.Time) error {
	once, err := newOnceWrite(time.Now())
	if err != nil {
		return fmt.Errorf("use grant %s: %w", id, err)
	}
	_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                           aws.String(s.tables.Tasks),
		Key:                                 grantKey(project, id),
		UpdateExpression:                    aws.String("ADD #uses :one, " + onceAdd + " " + onceRemove),
		ConditionExpression:                 aws.String("attribute_exists(pk) AND attribute_not_exists(revoked_at) AND expires_unix > :now AND " + onceCondition),
		ExpressionAttributeNames:            once.names(map[string]string{"#uses": "uses"}),
		ExpressionAttributeValues:           once.values(map[string]types.AttributeValue{":one": numberValue(1), ":now": numberValue(now.UnixMilli())}),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if _, landed := once.landed(err); landed {
		return nil
	}
	if err != nil {
		return writeError("use grant "+id, err)
	}
	return nil
}

// RevokeGrant marks a grant revoked, only if it exists and is not revoked
// yet. The revocation carries its own id (revoke_id), so the SDK's retry of
// one whose answer was lost is the revocation, not "already revoked".
func (s *Store) RevokeGrant(ctx context.Context, project, id, by string, now time.Time) error {
	at, err := marshalItem(struct {
		At time.Time `dynamodbav:"at"`
	}{now.UTC()})
	if err != nil {
		return fmt.Errorf("revoke grant %s: %w", id, err)
	}
	revoke, err := newWriteID()
	if err != nil {
		return fmt.Errorf("revoke grant %s: %w", id, err)
	}
	_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.tables.Tasks),
		Key:                       grantKey(project, id),
		UpdateExpression:          aws.String("SET revoked_at = :at, revoked_by = :by, revoke_id = :rid"),
		ConditionExpression:       aws.String("attribute_exists(pk) AND (attribute_not_exists(revoked_at) OR revoke_id = :rid)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":at": at["at"], ":by": stringValue(by), ":rid": stringValue(revoke)},
	})
	if err != nil {
		return writeError("revoke grant "+id, err)
	}
	return nil
}

var _ team.Grants = (*Store)(nil)
