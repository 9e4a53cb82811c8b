package store

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/useprickle/prickle/shared/auth/oauthstate"
)

// Runners joined by the device grant live in the OAuth table (RUNNER#<id>,
// sk RUNNER), beside the consents, with owner + created_at so by_owner
// lists them; their agent tokens are directory token items like any other.
const joinedRunnerSK = "RUNNER"

var _ oauthstate.DeviceStore = (*Store)(nil)

type joinedRunnerRecord struct {
	PK string `json:"pk"`
	SK string `json:"sk"`
	ID string `json:"runner_id"`
	ownedRecord
	Name      string `json:"runner_name"`
	TokenHash string `json:"token_hash"`
}

func newJoinedRunnerRecord(r oauthstate.JoinedRunner) joinedRunnerRecord {
	return joinedRunnerRecord{PK: "RUNNER#" + r.ID, SK: joinedRunnerSK, ID: r.ID, Name: r.Name, TokenHash: r.TokenHash,
		ownedRecord: ownedRecord{Owner: r.Owner, Agent: r.Agent, CreatedAt: sortableTime(r.CreatedAt), Revoked: r.Revoked}}
}

func (r joinedRunnerRecord) runner() oauthstate.JoinedRunner {
	return oauthstate.JoinedRunner{ID: r.ID, Owner: r.Owner, Agent: r.Agent, Name: r.Name, TokenHash: r.TokenHash, CreatedAt: sortableParsed(r.CreatedAt), Revoked: r.Revoked}
}

// PutJoinedRunner records a joined runner; an id stored already is ErrConflict.
func (s *Store) PutJoinedRunner(ctx context.Context, r oauthstate.JoinedRunner) error {
	if !tokenHashPattern.MatchString(r.TokenHash) {
		return fmt.Errorf("put joined runner: token hash is not a SHA-256 hex digest")
	}
	return s.putNewRecord(ctx, s.tables.OAuth, "put joined runner", newJoinedRunnerRecord(r))
}

// OwnerJoinedRunners lists the runners joined to an owner's agents, revoked ones included, newest first.
func (s *Store) OwnerJoinedRunners(ctx context.Context, owner string) ([]oauthstate.JoinedRunner, error) {
	runners, err := queryAll(ctx, s.db, s.ownerRecords(owner, joinedRunnerSK), func(r joinedRunnerRecord) oauthstate.JoinedRunner { return r.runner() })
	if err != nil {
		return nil, fmt.Errorf("joined runners of %s: %w", owner, err)
	}
	return runners, nil
}

// RevokeJoinedRunner marks the owner's runner revoked (one conditional write:
// it must be that owner's) and then revokes its agent token in the directory,
// so the runner's next call or claim is refused. Revoking again is harmless.
func (s *Store) RevokeJoinedRunner(ctx context.Context, owner, id string) (oauthstate.JoinedRunner, error) {
	res, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.tables.OAuth),
		Key:                       directoryKey("RUNNER#"+id, joinedRunnerSK),
		UpdateExpression:          aws.String("SET revoked = :true"),
		ConditionExpression:       aws.String("attribute_exists(pk) AND #owner = :owner"),
		ExpressionAttributeNames:  map[string]string{"#owner": "owner"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":true": &types.AttributeValueMemberBOOL{Value: true}, ":owner": stringValue(owner)},
		ReturnValues:              types.ReturnValueAllNew,
	})
	if _, missing := failedCondition(err); missing {
		return oauthstate.JoinedRunner{}, fmt.Errorf("revoke joined runner: %w", oauthstate.ErrNotFound)
	}
	if err != nil {
		return oauthstate.JoinedRunner{}, fmt.Errorf("revoke joined runner: %w", err)
	}
	var r joinedRunnerRecord
	if err := unmarshalItem(res.Attributes, &r); err != nil {
		return oauthstate.JoinedRunner{}, fmt.Errorf("revoke joined runner: %w", err)
	}
	if err := s.RevokeToken(ctx, r.TokenHash); err != nil {
		return oauthstate.JoinedRunner{}, fmt.Errorf("revoke joined runner %s: %w", id, err)
	}
	return r.runner(), nil
}

// AllowOAuthAttempt counts an attempt on a counter in the current window of
// that length (the window counters of sign-in and registration), refusing past max.
func (s *Store) AllowOAuthAttempt(ctx context.Context, counter string, max int, window time.Duration, now time.Time) (bool, error) {
	start := now.UTC().Truncate(window)
	ok, err := s.count(ctx, windowCount{table: s.tables.OAuth, pk: "OAUTHCOUNT#" + counter, window: start, max: max, ttl: start.Add(window + time.Hour)})
	if err != nil {
		return false, fmt.Errorf("count OAuth attempt: %w", err)
	}
	return ok, nil
}
