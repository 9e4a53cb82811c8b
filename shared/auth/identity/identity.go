// Package identity says who is calling: an agent, known only from its bearer
// token, never from a tool argument.
package identity

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Token kinds.
const (
	KindAgent = "agent" // long-lived, minted by an admin, revocable
	KindRun   = "run"   // short-lived, bound to (agent, task, run)
	KindOAuth = "oauth" // an OAuth access token: short-lived, for one resource, acting as one agent
)

// Caller is the authenticated agent behind a request.
type Caller struct {
	Agent string // owner/agent
	Owner string
	Kind  string
	// TaskID, RunID and ResumesRun are set for run tokens only.
	TaskID     string
	RunID      string
	ResumesRun string
	// Issued is when the token was minted (for a run token: when its run
	// began), as stored with it.
	Issued time.Time
	// Projects are the project slugs the agent belonged to as its token
	// says; they count only when ProjectsKnown (tokens stored before
	// memberships were copied onto them leave it false, and the team service
	// then reads the agent instead).
	Projects      []string
	ProjectsKnown bool
}

// Token is what the directory stores for a token: its hash and what it grants.
type Token struct {
	Hash       string
	Kind       string
	Agent      string
	TaskID     string
	RunID      string
	ResumesRun string
	ExpiresAt  *time.Time
	Revoked    bool
	CreatedAt  time.Time
	// Projects is a copy of the agent's memberships, kept in step by the
	// directory; ProjectsKnown is false on tokens stored without one.
	Projects      []string
	ProjectsKnown bool
	// Client, Audience, Scopes and Family are set on OAuth access tokens
	// only: the client the owner connected, the resource the token is for
	// (RFC 8707), the scopes granted, and the grant they all descend from
	// (revoked together when a code or refresh token is replayed).
	Client   string
	Audience string
	Scopes   []string
	Family   string
}

// ErrUnknownToken means no usable token matches: unknown, revoked or expired.
var ErrUnknownToken = errors.New("unknown, revoked or expired token")

// TokenLookup finds a stored token by the hash of its secret.
type TokenLookup interface {
	TokenByHash(ctx context.Context, hash string) (Token, error)
}

// NewSecret returns a fresh token secret; it is shown once and stored only as its hash.
func NewSecret(kind string) (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("token entropy: %w", err)
	}
	prefix := "prk_a_"
	switch kind {
	case KindRun:
		prefix = "prk_r_"
	case KindOAuth:
		prefix = "prk_o_"
	}
	return prefix + base64.RawURLEncoding.EncodeToString(b), nil
}

// Hash is how a token secret is stored and looked up.
func Hash(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// Authenticate turns an agent or run token's secret into a Caller, refusing
// unknown, revoked and expired tokens alike, and OAuth access tokens.
func Authenticate(ctx context.Context, tokens TokenLookup, secret string, now time.Time) (Caller, error) {
	secret = strings.TrimSpace(secret)
	if secret == "" {
		return Caller{}, ErrUnknownToken
	}
	t, err := tokens.TokenByHash(ctx, Hash(secret))
	if err != nil {
		return Caller{}, err
	}
	if t.Revoked || (t.ExpiresAt != nil && !now.Before(*t.ExpiresAt)) {
		return Caller{}, ErrUnknownToken
	}
	if t.Kind == KindOAuth {
		// OAuth access tokens hold only for the resource they were issued
		// for: shared/auth/oauthresource checks them, never this path.
		return Caller{}, ErrUnknownToken
	}
	owner, _, _ := strings.Cut(t.Agent, "/")
	return Caller{Agent: t.Agent, Owner: owner, Kind: t.Kind, TaskID: t.TaskID, RunID: t.RunID, ResumesRun: t.ResumesRun,
		Issued: t.CreatedAt, Projects: t.Projects, ProjectsKnown: t.ProjectsKnown}, nil
}
