package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/useprickle/prickle/shared/auth/oauthstate"
)

// The OAuth table keeps the authorization server's state, by pk:
//
//	client  CLIENT#<client_id>         sk CLIENT  (dynamically registered clients)
//	record  <kind>#<sha256 hex>        sk RECORD  (codes, PKCE challenges, refresh tokens,
//	                                              pending authorizations; never a secret; ttl)
//	grant   GRANT#<id>                 sk GRANT   (a consent: owner, agent, client; owner +
//	                                              created_at feed by_owner)
//	rate    OAUTHRATE#<network|all>    sk <window start>  (registration counts; ttl)
//	runner  RUNNER#<id>                sk RUNNER  (a runner joined by the device grant: owner,
//	                                              agent, name, token hash; owner + created_at
//	                                              feed by_owner)
//	count   OAUTHCOUNT#<counter>       sk <window start>  (device grant attempts; ttl)
//
// Access tokens live in the directory (TOKEN#<sha256>, kind oauth), where
// every MCP function already looks tokens up.
const (
	oauthClientSK = "CLIENT"
	oauthRecordSK = "RECORD"
	oauthGrantSK  = "GRANT"
	byOwnerIndex  = "by_owner"
)

var _ oauthstate.Store = (*Store)(nil)

type oauthClientRecord struct {
	PK           string   `json:"pk"`
	SK           string   `json:"sk"`
	ID           string   `json:"client_id"`
	Name         string   `json:"client_name"`
	RedirectURIs []string `json:"redirect_uris"`
	Registration string   `json:"registration"`
	CreatedAt    string   `json:"created_at"`
}

// PutOAuthClient stores a registered client; an id stored already is ErrConflict.
func (s *Store) PutOAuthClient(ctx context.Context, c oauthstate.Client) error {
	return s.putNewRecord(ctx, s.tables.OAuth, "put OAuth client", oauthClientRecord{PK: "CLIENT#" + c.ID, SK: oauthClientSK, ID: c.ID, Name: c.Name,
		RedirectURIs: c.RedirectURIs, Registration: c.Registration, CreatedAt: sortableTime(c.CreatedAt)})
}

// OAuthClient reads a registered client; an unknown id is oauthstate.ErrNotFound.
func (s *Store) OAuthClient(ctx context.Context, id string) (oauthstate.Client, error) {
	var r oauthClientRecord
	if err := s.getOAuth(ctx, "CLIENT#"+id, oauthClientSK, &r); err != nil {
		return oauthstate.Client{}, fmt.Errorf("OAuth client: %w", err)
	}
	return oauthstate.Client{ID: r.ID, Name: r.Name, RedirectURIs: r.RedirectURIs, Registration: r.Registration, CreatedAt: sortableParsed(r.CreatedAt)}, nil
}

func (s *Store) getOAuth(ctx context.Context, pk, sk string, out any) error {
	res, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.tables.OAuth), Key: directoryKey(pk, sk), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return err
	}
	if res.Item == nil {
		return oauthstate.ErrNotFound
	}
	return unmarshalItem(res.Item, out)
}

// AllowOAuthRegistration counts a registration from a network, and overall, in
// the current window, refusing past either bound.
func (s *Store) AllowOAuthRegistration(ctx context.Context, network string, now time.Time) (bool, error) {
	window := now.UTC().Truncate(oauthstate.RegistrationWindow)
	for _, c := range []struct {
		pk  string
		max int
	}{{"OAUTHRATE#" + network, oauthstate.RegistrationsPerNetwork}, {registrationsOverallPK, oauthstate.RegistrationsOverall}} {
		ok, err := s.count(ctx, windowCount{table: s.tables.OAuth, pk: c.pk, window: window, max: c.max,
			ttl: window.Add(oauthstate.RegistrationWindow + time.Hour)})
		if err != nil {
			return false, fmt.Errorf("count OAuth registration: %w", err)
		}
		if !ok {
			return false, nil
		}
	}
	return true, nil
}

const registrationsOverallPK = "OAUTHRATE#all"

// ReopenOAuthRegistrations clears the count of dynamic registrations of the
// current window from every network together (the operator's answer when
// someone filled it): registrations are accepted again at once, while the
// networks that filled it keep their own counts and stay refused until the
// window ends. It returns the count it cleared.
func (s *Store) ReopenOAuthRegistrations(ctx context.Context, now time.Time) (int, error) {
	n, err := s.clearCount(ctx, s.tables.OAuth, registrationsOverallPK, now.UTC().Truncate(oauthstate.RegistrationWindow))
	if err != nil {
		return 0, fmt.Errorf("reopen OAuth registrations: %w", err)
	}
	return n, nil
}

type oauthRecord struct {
	PK      string `json:"pk"`
	SK      string `json:"sk"`
	Kind    string `json:"kind"`
	Hash    string `json:"hash"`
	Family  string `json:"family"`
	Active  bool   `json:"active"`
	Expires string `json:"expires_at"`
	Request []byte `json:"request"`
	TTL     int64  `json:"ttl"`
}

func recordPK(kind, hash string) string { return "OAUTH" + kind + "#" + hash }

// PutOAuthRecord stores (or replaces) a code, PKCE challenge, refresh token or
// pending authorization by its hash; DynamoDB drops it a day after it expires.
func (s *Store) PutOAuthRecord(ctx context.Context, r oauthstate.Record) error {
	if !tokenHashPattern.MatchString(r.Hash) {
		return fmt.Errorf("put OAuth %s: hash is not a SHA-256 hex digest", r.Kind)
	}
	item, err := marshalItem(oauthRecord{PK: recordPK(r.Kind, r.Hash), SK: oauthRecordSK, Kind: r.Kind, Hash: r.Hash, Family: r.Family,
		Active: r.Active, Expires: r.Expires.UTC().Format(time.RFC3339Nano), Request: r.Request, TTL: r.Expires.Add(24 * time.Hour).Unix()})
	if err != nil {
		return fmt.Errorf("put OAuth %s: %w", r.Kind, err)
	}
	if _, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.tables.OAuth), Item: item}); err != nil {
		return fmt.Errorf("put OAuth %s: %w", r.Kind, err)
	}
	return nil
}

// OAuthRecord reads a record by kind and hash (strongly consistent).
func (s *Store) OAuthRecord(ctx context.Context, kind, hash string) (oauthstate.Record, error) {
	if !tokenHashPattern.MatchString(hash) {
		return oauthstate.Record{}, oauthstate.ErrNotFound
	}
	var r oauthRecord
	if err := s.getOAuth(ctx, recordPK(kind, hash), oauthRecordSK, &r); err != nil {
		return oauthstate.Record{}, fmt.Errorf("OAuth %s: %w", kind, err)
	}
	exp, err := time.Parse(time.RFC3339Nano, r.Expires)
	if err != nil {
		return oauthstate.Record{}, fmt.Errorf("OAuth %s: expires_at: %w", kind, err)
	}
	return oauthstate.Record{Kind: r.Kind, Hash: r.Hash, Family: r.Family, Active: r.Active, Expires: exp, Request: r.Request}, nil
}

// DeactivateOAuthRecord marks a record used with one conditional write: of two racing
// uses, one wins and the other gets oauthstate.ErrInactive. The use carries
// its own id (used_by), so the SDK's retry of a use whose answer was lost is
// that use, not a replay (which the authorization server answers by ending
// the connection).
func (s *Store) DeactivateOAuthRecord(ctx context.Context, kind, hash string) error {
	if !tokenHashPattern.MatchString(hash) {
		return oauthstate.ErrNotFound
	}
	use, err := newWriteID()
	if err != nil {
		return fmt.Errorf("use OAuth %s: %w", kind, err)
	}
	_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:           aws.String(s.tables.OAuth),
		Key:                 directoryKey(recordPK(kind, hash), oauthRecordSK),
		UpdateExpression:    aws.String("SET active = :false, used_by = :use"),
		ConditionExpression: aws.String("active = :true OR used_by = :use"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":true": &types.AttributeValueMemberBOOL{Value: true}, ":false": &types.AttributeValueMemberBOOL{Value: false},
			":use": stringValue(use)},
	})
	if _, lost := failedCondition(err); lost {
		return fmt.Errorf("use OAuth %s: %w", kind, oauthstate.ErrInactive)
	}
	if err != nil {
		return fmt.Errorf("use OAuth %s: %w", kind, err)
	}
	return nil
}

// DeleteOAuthRecord removes a record; a missing one is not an error.
func (s *Store) DeleteOAuthRecord(ctx context.Context, kind, hash string) error {
	if !tokenHashPattern.MatchString(hash) {
		return nil
	}
	_, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(s.tables.OAuth), Key: directoryKey(recordPK(kind, hash), oauthRecordSK)})
	if err != nil {
		return fmt.Errorf("delete OAuth %s: %w", kind, err)
	}
	return nil
}

// ownedRecord is what the oauth table's items that an owner lists and
// revokes (consents, joined runners) hold alike: the by_owner index's keys
// (owner, created_at), the agent they are for, and whether they are revoked.
type ownedRecord struct {
	Owner     string `json:"owner"`
	Agent     string `json:"agent_id"`
	CreatedAt string `json:"created_at"`
	Revoked   bool   `json:"revoked"`
}

// oauthGrantRecord is a consent's item. (Alike joinedRunnerRecord, with its
// constructor and reader, beyond ownedRecord: each stores its id under a
// name of its own, grant_id and runner_id, and has fields of its own.)
type oauthGrantRecord struct {
	PK string `json:"pk"`
	SK string `json:"sk"`
	ID string `json:"grant_id"`
	ownedRecord
	Client     string `json:"client_id"`
	ClientName string `json:"client_name"`
}

func newOAuthGrantRecord(g oauthstate.Connection) oauthGrantRecord {
	return oauthGrantRecord{PK: "GRANT#" + g.ID, SK: oauthGrantSK, ID: g.ID, Client: g.Client, ClientName: g.ClientName,
		ownedRecord: ownedRecord{Owner: g.Owner, Agent: g.Agent, CreatedAt: sortableTime(g.CreatedAt), Revoked: g.Revoked}}
}

func (r oauthGrantRecord) grant() oauthstate.Connection {
	return oauthstate.Connection{ID: r.ID, Owner: r.Owner, Agent: r.Agent, Client: r.Client, ClientName: r.ClientName, CreatedAt: sortableParsed(r.CreatedAt), Revoked: r.Revoked}
}

// PutOAuthConnection records a consent; a grant stored already (the same request) is ErrConflict.
func (s *Store) PutOAuthConnection(ctx context.Context, g oauthstate.Connection) error {
	return s.putNewRecord(ctx, s.tables.OAuth, "put OAuth grant", newOAuthGrantRecord(g))
}

// OAuthConnection reads a consent (strongly consistent, so a revocation holds at once).
func (s *Store) OAuthConnection(ctx context.Context, id string) (oauthstate.Connection, error) {
	var r oauthGrantRecord
	if err := s.getOAuth(ctx, "GRANT#"+id, oauthGrantSK, &r); err != nil {
		return oauthstate.Connection{}, fmt.Errorf("OAuth grant: %w", err)
	}
	return r.grant(), nil
}

// OwnerOAuthConnections lists an owner's consents, newest first.
func (s *Store) OwnerOAuthConnections(ctx context.Context, owner string) ([]oauthstate.Connection, error) {
	grants, err := queryAll(ctx, s.db, s.ownerRecords(owner, oauthGrantSK), func(r oauthGrantRecord) oauthstate.Connection { return r.grant() })
	if err != nil {
		return nil, fmt.Errorf("OAuth connections of %s: %w", owner, err)
	}
	return grants, nil
}

// ownerRecords queries the oauth table's records of one kind (sk) that
// belong to an owner, newest first, through the by_owner index.
func (s *Store) ownerRecords(owner, sk string) *dynamodb.QueryInput {
	return &dynamodb.QueryInput{
		TableName: aws.String(s.tables.OAuth), IndexName: aws.String(byOwnerIndex),
		KeyConditionExpression:    aws.String("#owner = :owner"),
		FilterExpression:          aws.String("sk = :sk"),
		ExpressionAttributeNames:  map[string]string{"#owner": "owner"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":owner": stringValue(owner), ":sk": stringValue(sk)},
		ScanIndexForward:          aws.Bool(false),
	}
}

// RevokeOAuthConnection marks a consent revoked, then revokes its access tokens in
// the directory; its codes and refresh tokens are refused from then on.
func (s *Store) RevokeOAuthConnection(ctx context.Context, id string) error {
	res, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.tables.OAuth),
		Key:                       directoryKey("GRANT#"+id, oauthGrantSK),
		UpdateExpression:          aws.String("SET revoked = :true"),
		ConditionExpression:       aws.String("attribute_exists(pk)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":true": &types.AttributeValueMemberBOOL{Value: true}},
		ReturnValues:              types.ReturnValueAllNew,
	})
	if _, missing := failedCondition(err); missing {
		return fmt.Errorf("revoke OAuth grant: %w", oauthstate.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("revoke OAuth grant: %w", err)
	}
	var r oauthGrantRecord
	if err := unmarshalItem(res.Attributes, &r); err != nil {
		return fmt.Errorf("revoke OAuth grant: %w", err)
	}
	if _, err := s.RevokeTokenFamily(ctx, r.Agent, id); err != nil && !errors.Is(err, oauthstate.ErrNotFound) {
		return fmt.Errorf("revoke OAuth grant: %w", err)
	}
	return nil
}
