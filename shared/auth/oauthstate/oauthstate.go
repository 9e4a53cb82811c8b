// Package oauthstate holds what Prickle's OAuth authorization server
// stores (clients, codes, refresh tokens, consents) and the port the
// DynamoDB store implements for it, apart from the authorization logic so the
// store and the MCP functions never link the OAuth library.
package oauthstate

import (
	"context"
	"errors"
	"time"

	"github.com/useprickle/prickle/shared/auth/identity"
)

// OAuthRecord kinds kept through Store: authorization codes, their PKCE
// challenges, and refresh tokens; each is stored by the SHA-256 of its secret.
const (
	KindCode    = "code"
	KindPKCE    = "pkce"
	KindRefresh = "refresh"
)

// Registration says how a client came to be known, as the consent page shows it.
const (
	RegisteredDynamically = "dynamic"  // RFC 7591 POST /oauth/register
	RegisteredByDocument  = "document" // client ID metadata document
)

// ErrNotFound means no such record, client or grant.
var ErrNotFound = errors.New("not found")

// ErrInactive means a code or refresh token was used before (or revoked).
var ErrInactive = errors.New("already used or revoked")

// OAuthClient is a registered OAuth client: public (no secret), with exact redirect URIs.
type Client struct {
	ID           string
	Name         string
	RedirectURIs []string
	Registration string // RegisteredDynamically or RegisteredByDocument
	CreatedAt    time.Time
}

// OAuthRecord is a stored code, PKCE challenge or refresh token: the hash of its
// secret, the grant family it belongs to, whether it may still be used, and
// the request it stands for as JSON.
type Record struct {
	Kind    string
	Hash    string
	Family  string
	Active  bool
	Expires time.Time
	Request []byte
}

// Connection is one consent: an owner let a client act as one agent. Its id is
// the family of every code and token issued under it.
type Connection struct {
	ID         string
	Owner      string
	Agent      string
	Client     string
	ClientName string
	CreatedAt  time.Time
	Revoked    bool
}

// Store is the storage the authorization server needs; *store.Store
// implements it over DynamoDB. Every secret arrives hashed.
type Store interface {
	PutOAuthClient(ctx context.Context, c Client) error
	OAuthClient(ctx context.Context, id string) (Client, error)
	// AllowOAuthRegistration counts one registration from a network (a hash of
	// the caller's address) and reports whether it is within the bounds.
	AllowOAuthRegistration(ctx context.Context, network string, now time.Time) (bool, error)

	PutOAuthRecord(ctx context.Context, r Record) error
	OAuthRecord(ctx context.Context, kind, hash string) (Record, error)
	// DeactivateOAuthRecord marks a record used, once: a second call is ErrInactive,
	// so two racing exchanges of one code have one winner.
	DeactivateOAuthRecord(ctx context.Context, kind, hash string) error
	DeleteOAuthRecord(ctx context.Context, kind, hash string) error

	PutOAuthConnection(ctx context.Context, g Connection) error
	OAuthConnection(ctx context.Context, id string) (Connection, error)
	OwnerOAuthConnections(ctx context.Context, owner string) ([]Connection, error)
	// RevokeOAuthConnection marks the grant revoked and revokes its access tokens
	// at once; its codes and refresh tokens are refused from then on.
	RevokeOAuthConnection(ctx context.Context, id string) error

	// PutToken stores an access token (identity.KindOAuth) in the directory,
	// where /mcp looks it up.
	PutToken(ctx context.Context, t identity.Token) error
}

// Registration bounds: per network and overall, in a window of RegistrationWindow.
const (
	RegistrationWindow      = 15 * time.Minute
	RegistrationsPerNetwork = 20
	RegistrationsOverall    = 500
)

// Record kinds of the device authorization grant (RFC 8628), by which a
// runner joins its agent: the device code the runner polls with, the user
// code the owner confirms (single use), and the owner's decision, kept by
// the device code's hash. Each is stored by the SHA-256 of its secret.
const (
	KindDevice         = "device"
	KindUserCode       = "usercode"
	KindDeviceDecision = "devicedecision"
)

// JoinedRunner is a machine that joined an agent by its owner's sign-in
// (the device grant): the agent token it received is known by its hash.
type JoinedRunner struct {
	ID        string
	Owner     string
	Agent     string
	Name      string // the name (host) the runner sent, as the owner saw it
	TokenHash string
	CreatedAt time.Time
	Revoked   bool
}

// Runners is what the owners page needs to list and revoke joined runners.
type Runners interface {
	// OwnerJoinedRunners lists the runners joined to the owner's agents, newest first.
	OwnerJoinedRunners(ctx context.Context, owner string) ([]JoinedRunner, error)
	// RevokeJoinedRunner marks an owner's joined runner revoked and revokes its
	// token at once; another owner's runner, or an unknown id, is ErrNotFound.
	RevokeJoinedRunner(ctx context.Context, owner, id string) (JoinedRunner, error)
}

// DeviceStore is what the device grant stores beyond Store.
type DeviceStore interface {
	Runners
	PutJoinedRunner(ctx context.Context, r JoinedRunner) error
	// AllowOAuthAttempt counts one attempt on a counter (a device request from
	// a network, a code tried by an owner, a poll of a device code) in the
	// current window of that length, refusing past max.
	AllowOAuthAttempt(ctx context.Context, counter string, max int, window time.Duration, now time.Time) (bool, error)
}
