package store

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/useprickle/prickle/shared/auth/session"
)

// Sign-in markers, in the directory table, make owners' sign-in links single use:
//
//	signin  pk SIGNIN#<nonce>  sk USED  at, ttl
//
// The first use puts the marker with attribute_not_exists(pk); a second use
// of the same link loses that condition. ttl lets DynamoDB drop the marker a
// day after the link expired (an expired link is refused by its signature's
// time anyway). No agent_id, so the by_agent index ignores them.
const signInSK = "USED"

// UseSignIn records that the sign-in link with this nonce was used; first is
// false when it had been used before.
func (s *Store) UseSignIn(ctx context.Context, nonce string, expires time.Time) (bool, error) {
	if nonce == "" {
		return false, fmt.Errorf("use sign-in link: no nonce")
	}
	first, err := s.putMarker(ctx, "SIGNIN#"+nonce, signInSK, "signin", time.Now(), expires.Add(24*time.Hour))
	if err != nil {
		return false, fmt.Errorf("use sign-in link: %w", err)
	}
	return first, nil
}

// AllowSignInRequest counts a request for a sign-in link for owner from
// client (session.Client) in the current window and says which bound it
// hit, if any. The client's counters come first and the name's last, so a
// request refused for its client uses up nothing of the name's allowance.
// It counts any name the form is given, so the answer tells nothing about
// who is an owner:
//
//	client  pk SIGNINCLIENT#<client>          sk <window start>  requests, ttl
//	pair    pk SIGNINRATE#<owner>#<client>    sk <window start>  requests, ttl
//	name    pk SIGNINRATE#<owner>             sk <window start>  requests, ttl
func (s *Store) AllowSignInRequest(ctx context.Context, owner, client string, now time.Time) (session.SignInLimit, error) {
	window := now.UTC().Truncate(session.SignInWindow)
	for _, c := range []struct {
		pk    string
		max   int
		limit session.SignInLimit
	}{
		{signInClientPK(client), session.RequestsPerClient, session.ClientLimit},
		{signInNamePK(owner) + "#" + client, session.LinksPerNamePerClient, session.NameFromClientLimit},
		{signInNamePK(owner), session.LinksPerName, session.NameLimit},
	} {
		within, err := s.countSignIn(ctx, c.pk, c.max, window)
		if err != nil {
			return session.WithinLimits, fmt.Errorf("count sign-in request for %s: %w", owner, err)
		}
		if !within {
			return c.limit, nil
		}
	}
	return session.WithinLimits, nil
}

func signInNamePK(owner string) string { return "SIGNINRATE#" + owner }

func signInClientPK(client string) string { return "SIGNINCLIENT#" + client }

// ReopenSignIn clears the count of sign-in links asked for owner in the
// current window (the operator's answer when strangers used it up): the
// owner may ask again at once, while the clients that used it up keep
// their own counts and stay refused until the window ends. It returns the
// count it cleared.
func (s *Store) ReopenSignIn(ctx context.Context, owner string, now time.Time) (int, error) {
	n, err := s.clearCount(ctx, s.tables.Directory, signInNamePK(owner), now.UTC().Truncate(session.SignInWindow))
	if err != nil {
		return 0, fmt.Errorf("reopen sign-in of %s: %w", owner, err)
	}
	return n, nil
}

// ReopenSignInFrom clears what one client asked in the current window: its
// own count and its count for owner (the operator's answer when an owner's
// own address is refused, e.g. an office behind one address). It returns
// the two counts it cleared.
func (s *Store) ReopenSignInFrom(ctx context.Context, owner, client string, now time.Time) (int, error) {
	window := now.UTC().Truncate(session.SignInWindow)
	total := 0
	for _, pk := range []string{signInClientPK(client), signInNamePK(owner) + "#" + client} {
		n, err := s.clearCount(ctx, s.tables.Directory, pk, window)
		if err != nil {
			return total, fmt.Errorf("reopen sign-in of %s from %s: %w", owner, client, err)
		}
		total += n
	}
	return total, nil
}

// countSignIn adds one request to a window's counter unless it holds max already.
func (s *Store) countSignIn(ctx context.Context, pk string, max int, window time.Time) (bool, error) {
	return s.count(ctx, windowCount{table: s.tables.Directory, pk: pk, window: window, max: max,
		ttl: window.Add(session.SignInWindow + time.Hour), kind: "signin_rate"})
}

// Owners' sessions, in the directory table, make session cookies revocable:
//
//	session  pk SESSION#<owner>  sk <session id>  created_at, ttl
//
// A cookie opens pages only while its item exists (one strongly consistent
// GetItem per signed-in request). Signing out deletes the item; signing out
// everywhere deletes every item of the owner's partition. ttl, the session's
// expiry, lets DynamoDB drop items of sessions nobody signed out of (an
// expired cookie is refused by its signature's time anyway). The session id
// is a bearer secret: it is never logged nor put in an error.
type sessionRecord struct {
	PK        string `dynamodbav:"pk"`
	SK        string `dynamodbav:"sk"`
	Type      string `dynamodbav:"type"`
	CreatedAt string `dynamodbav:"created_at"`
	TTL       int64  `dynamodbav:"ttl"`
}

func sessionPK(owner string) string { return "SESSION#" + owner }

// StartSession records a session of owner until expires.
func (s *Store) StartSession(ctx context.Context, owner, id string, expires time.Time) error {
	if owner == "" || id == "" {
		return fmt.Errorf("start session: no owner or no session id")
	}
	item, err := marshalItem(sessionRecord{
		PK: sessionPK(owner), SK: id, Type: "session",
		CreatedAt: sortableTime(time.Now()), TTL: expires.Unix(),
	})
	if err != nil {
		return fmt.Errorf("start session of %s: %w", owner, err)
	}
	if _, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.tables.Directory), Item: item}); err != nil {
		return fmt.Errorf("start session of %s: %w", owner, err)
	}
	return nil
}

// SessionActive reports whether the session is recorded, strongly consistent
// so a sign-out is seen by the very next request.
func (s *Store) SessionActive(ctx context.Context, owner, id string) (bool, error) {
	if owner == "" || id == "" {
		return false, nil
	}
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:            aws.String(s.tables.Directory),
		Key:                  directoryKey(sessionPK(owner), id),
		ConsistentRead:       aws.Bool(true),
		ProjectionExpression: aws.String("pk"),
	})
	if err != nil {
		return false, fmt.Errorf("check session of %s: %w", owner, err)
	}
	return out.Item != nil, nil
}

// EndSession deletes one session of owner; an unknown one is not an error.
func (s *Store) EndSession(ctx context.Context, owner, id string) error {
	if owner == "" || id == "" {
		return nil
	}
	if _, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: aws.String(s.tables.Directory),
		Key:       directoryKey(sessionPK(owner), id),
	}); err != nil {
		return fmt.Errorf("end session of %s: %w", owner, err)
	}
	return nil
}

// EndOwnerSessions deletes every session of owner: a Query of the owner's
// partition, then one DeleteItem per session (an owner has a handful).
func (s *Store) EndOwnerSessions(ctx context.Context, owner string) error {
	if owner == "" {
		return fmt.Errorf("end sessions: no owner")
	}
	in := partitionQuery(s.tables.Directory, sessionPK(owner))
	in.ProjectionExpression = aws.String("pk, sk")
	for {
		out, err := s.db.Query(ctx, in)
		if err != nil {
			return fmt.Errorf("list sessions of %s: %w", owner, err)
		}
		for _, it := range out.Items {
			if _, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
				TableName: aws.String(s.tables.Directory),
				Key:       map[string]types.AttributeValue{"pk": it["pk"], "sk": it["sk"]},
			}); err != nil {
				return fmt.Errorf("end sessions of %s: %w", owner, err)
			}
		}
		if len(out.LastEvaluatedKey) == 0 {
			return nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}
