package store

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/team"
)

// A token item is (TOKEN#<sha256 hex>, TOKEN): what the token grants, never
// its secret. agent_id and created_at put it in the by_agent index, so an
// agent's tokens can be listed and revoked together.
const (
	tokenSK      = "TOKEN"
	byAgentIndex = "by_agent"
)

func tokenPK(hash string) string { return "TOKEN#" + hash }

// tokenHashPattern is what identity.Hash produces; anything else (a secret
// passed by mistake, above all) is refused before it reaches the table.
var tokenHashPattern = regexp.MustCompile(`^[0-9a-f]{64}$`)

type tokenRecord struct {
	PK         string `dynamodbav:"pk"`
	SK         string `dynamodbav:"sk"`
	Type       string `dynamodbav:"type"`
	Hash       string `dynamodbav:"hash"`
	Kind       string `dynamodbav:"kind"`
	AgentID    string `dynamodbav:"agent_id"`
	TaskID     string `dynamodbav:"task_id,omitempty"`
	RunID      string `dynamodbav:"run_id,omitempty"`
	ResumesRun string `dynamodbav:"resumes_run,omitempty"`
	ExpiresAt  string `dynamodbav:"expires_at,omitempty"`
	Revoked    bool   `dynamodbav:"revoked"`
	CreatedAt  string `dynamodbav:"created_at"`
	// Projects copies the agent's memberships (PutToken, PutAgent), so a
	// call learns them with the token; tokens stored before that lack
	// projects_known and the team service reads the agent for them.
	Projects      []string `dynamodbav:"projects,omitempty"`
	ProjectsKnown bool     `dynamodbav:"projects_known,omitempty"`
	// OAuth access tokens only: the client, the resource (audience), the
	// scopes, the grant family, and ttl (epoch seconds) for DynamoDB to drop them.
	Client   string   `dynamodbav:"client,omitempty"`
	Audience string   `dynamodbav:"audience,omitempty"`
	Scopes   []string `dynamodbav:"scopes,omitempty"`
	Family   string   `dynamodbav:"family,omitempty"`
	TTL      int64    `dynamodbav:"ttl,omitempty"`
	// Put is the random id of the PutToken call that wrote it: the SDK's
	// retry of a put whose answer was lost is still that put, not a second one.
	Put string `dynamodbav:"put_id,omitempty"`
}

// PutToken stores a new token by its hash; a token with that hash already
// stored is ErrConflict, so a revoked token cannot be brought back. The
// token carries a copy of the agent's current projects (none known when the
// agent is not in the directory).
func (s *Store) PutToken(ctx context.Context, t identity.Token) error {
	if !tokenHashPattern.MatchString(t.Hash) {
		return fmt.Errorf("put token: hash is not a SHA-256 hex digest (store identity.Hash(secret), never the secret)")
	}
	if t.Agent == "" || (t.Kind != identity.KindAgent && t.Kind != identity.KindRun && t.Kind != identity.KindOAuth) {
		return fmt.Errorf("put token: needs an agent and kind %s, %s or %s", identity.KindAgent, identity.KindRun, identity.KindOAuth)
	}
	if t.Kind == identity.KindOAuth && (t.ExpiresAt == nil || t.Audience == "" || t.Client == "" || t.Family == "") {
		return fmt.Errorf("put token: an OAuth access token needs an expiry, an audience, a client and a family")
	}
	r := tokenRecord{
		PK: tokenPK(t.Hash), SK: tokenSK, Type: "token", Hash: t.Hash, Kind: t.Kind, AgentID: t.Agent,
		TaskID: t.TaskID, RunID: t.RunID, ResumesRun: t.ResumesRun,
		Revoked: t.Revoked, CreatedAt: sortableTime(t.CreatedAt),
		Client: t.Client, Audience: t.Audience, Scopes: t.Scopes, Family: t.Family,
	}
	if t.Kind == identity.KindOAuth {
		r.TTL = t.ExpiresAt.Unix()
	}
	a, err := s.Agent(ctx, t.Agent)
	switch {
	case err == nil:
		r.Projects, r.ProjectsKnown = a.Projects, true
	case !errors.Is(err, team.ErrNotFound):
		return fmt.Errorf("put %s token of %s: %w", t.Kind, t.Agent, err)
	}
	if t.ExpiresAt != nil {
		r.ExpiresAt = t.ExpiresAt.UTC().Format(time.RFC3339Nano)
	}
	if r.Put, err = newWriteID(); err != nil {
		return fmt.Errorf("put %s token of %s: %w", t.Kind, t.Agent, err)
	}
	item, err := marshalItem(r)
	if err != nil {
		return fmt.Errorf("put %s token of %s: %w", t.Kind, t.Agent, err)
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                 aws.String(s.tables.Directory),
		Item:                      item,
		ConditionExpression:       aws.String("attribute_not_exists(pk) OR put_id = :put"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":put": &types.AttributeValueMemberS{Value: r.Put}},
	})
	if err != nil {
		return writeError(fmt.Sprintf("put %s token of %s", t.Kind, t.Agent), err)
	}
	return nil
}

// TokenByHash finds a token by the hash of its secret, strongly consistent so
// a revocation applies to the very next call. A missing token is
// identity.ErrUnknownToken; revoked and expired ones are returned as stored
// for identity.Authenticate to refuse.
func (s *Store) TokenByHash(ctx context.Context, hash string) (identity.Token, error) {
	if !tokenHashPattern.MatchString(hash) {
		return identity.Token{}, identity.ErrUnknownToken
	}
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(s.tables.Directory),
		Key:            directoryKey(tokenPK(hash), tokenSK),
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return identity.Token{}, fmt.Errorf("look up token: %w", err)
	}
	if out.Item == nil {
		return identity.Token{}, identity.ErrUnknownToken
	}
	var r tokenRecord
	if err := unmarshalItem(out.Item, &r); err != nil {
		return identity.Token{}, fmt.Errorf("look up token: %w", err)
	}
	t := identity.Token{
		Hash: r.Hash, Kind: r.Kind, Agent: r.AgentID, TaskID: r.TaskID, RunID: r.RunID,
		ResumesRun: r.ResumesRun, Revoked: r.Revoked,
		Projects: r.Projects, ProjectsKnown: r.ProjectsKnown,
		Client: r.Client, Audience: r.Audience, Scopes: r.Scopes, Family: r.Family,
	}
	if t.CreatedAt, err = time.Parse(time.RFC3339Nano, r.CreatedAt); err != nil {
		return identity.Token{}, fmt.Errorf("look up token: created_at: %w", err)
	}
	if r.ExpiresAt != "" {
		at, err := time.Parse(time.RFC3339Nano, r.ExpiresAt)
		if err != nil {
			return identity.Token{}, fmt.Errorf("look up token: expires_at: %w", err)
		}
		t.ExpiresAt = &at
	}
	return t, nil
}

// RevokeToken marks one token revoked (admin command); revoking twice is
// fine, an unknown hash is ErrNotFound.
func (s *Store) RevokeToken(ctx context.Context, hash string) error {
	if !tokenHashPattern.MatchString(hash) {
		return fmt.Errorf("revoke token: hash is not a SHA-256 hex digest")
	}
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.tables.Directory),
		Key:                       directoryKey(tokenPK(hash), tokenSK),
		UpdateExpression:          aws.String("SET revoked = :true"),
		ConditionExpression:       aws.String("attribute_exists(pk)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":true": &types.AttributeValueMemberBOOL{Value: true}},
	})
	if _, missing := failedCondition(err); missing {
		return fmt.Errorf("revoke token: %w", team.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("revoke token: %w", err)
	}
	return nil
}

// liveTokenHashes lists the hashes of an agent's unrevoked tokens (agent and
// run tokens alike), through the by_agent index.
func (s *Store) liveTokenHashes(ctx context.Context, agentID string) ([]string, error) {
	return queryAll(ctx, s.db, &dynamodb.QueryInput{
		TableName:                 aws.String(s.tables.Directory),
		IndexName:                 aws.String(byAgentIndex),
		KeyConditionExpression:    aws.String("agent_id = :agent"),
		FilterExpression:          aws.String("revoked = :false"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":agent": stringValue(agentID), ":false": &types.AttributeValueMemberBOOL{Value: false}},
	}, func(r tokenRecord) string { return r.Hash })
}

// RevokeAgentTokens revokes every unrevoked token of an agent, agent and run
// tokens alike (admin command: a leaked or retired agent), and says how many.
func (s *Store) RevokeAgentTokens(ctx context.Context, agentID string) (int, error) {
	hashes, err := s.liveTokenHashes(ctx, agentID)
	if err != nil {
		return 0, fmt.Errorf("tokens of %s: %w", agentID, err)
	}
	revoked := 0
	for _, h := range hashes {
		err := s.RevokeToken(ctx, h)
		if errors.Is(err, team.ErrNotFound) { // deleted meanwhile: nothing to revoke
			continue
		}
		if err != nil {
			return revoked, fmt.Errorf("tokens of %s: %w", agentID, err)
		}
		revoked++
	}
	return revoked, nil
}

// RevokeTokenFamily revokes every unrevoked OAuth access token of an agent
// issued under one grant family (a replayed code or refresh token, or the
// owner disconnecting the client), and says how many.
func (s *Store) RevokeTokenFamily(ctx context.Context, agentID, family string) (int, error) {
	in := &dynamodb.QueryInput{
		TableName:                aws.String(s.tables.Directory),
		IndexName:                aws.String(byAgentIndex),
		KeyConditionExpression:   aws.String("agent_id = :agent"),
		FilterExpression:         aws.String("revoked = :false AND #family = :family"),
		ExpressionAttributeNames: map[string]string{"#family": "family"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":agent": stringValue(agentID), ":false": &types.AttributeValueMemberBOOL{Value: false}, ":family": stringValue(family),
		},
	}
	hashes, err := queryAll(ctx, s.db, in, func(r tokenRecord) string { return r.Hash })
	if err != nil {
		return 0, fmt.Errorf("tokens of grant %s: %w", family, err)
	}
	revoked := 0
	for _, h := range hashes {
		err := s.RevokeToken(ctx, h)
		if errors.Is(err, team.ErrNotFound) {
			continue
		}
		if err != nil {
			return revoked, fmt.Errorf("tokens of grant %s: %w", family, err)
		}
		revoked++
	}
	return revoked, nil
}
