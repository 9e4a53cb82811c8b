// Package oauthresource makes /mcp an OAuth 2.1 protected resource: its
// RFC 9728 metadata, the WWW-Authenticate challenges that point clients at
// it, and the check of an access token's issuer, expiry, audience (RFC 8707)
// and scope. It knows nothing of the grant logic (shared/owners/oauth) so the tool
// functions stay small.
package oauthresource

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/useprickle/prickle/shared/auth/identity"
)

// Scope is the one scope Prickle grants: acting as the chosen agent through MCP.
const Scope = "prickle"

// TokenPrefix starts every OAuth access token Prickle issues, so the
// endpoint knows which directory to look it up in.
const TokenPrefix = "prk_o_"

// MetadataPath is where the resource's metadata is served under the base
// URL (RFC 9728 inserts the well-known segment before the resource's path);
// RootMetadataPath is the root form that clients also probe.
const (
	MetadataPath     = "/.well-known/oauth-protected-resource/mcp"
	RootMetadataPath = "/.well-known/oauth-protected-resource"
)

// ErrInsufficientScope means the token is valid for this resource but was
// not granted the scope MCP needs: 403, not 401.
var ErrInsufficientScope = errors.New("the token was not granted the prickle scope")

// Resource is one MCP endpoint as an OAuth protected resource.
type Resource struct {
	// BaseURL is the public base (PUBLIC_BASE_URL): the authorization
	// server's issuer; the resource is BaseURL + "/mcp".
	BaseURL string
	// Tokens looks OAuth access tokens up by hash (the OAuth table).
	Tokens identity.TokenLookup
}

// New builds the resource for a public base URL; it does no I/O.
func New(baseURL string, tokens identity.TokenLookup) *Resource {
	return &Resource{BaseURL: strings.TrimSuffix(baseURL, "/"), Tokens: tokens}
}

// URL is the canonical resource identifier tokens must be issued for.
func (r *Resource) URL() string { return r.BaseURL + "/mcp" }

// MetadataURL is the resource_metadata URL the 401 challenge names.
func (r *Resource) MetadataURL() string { return r.BaseURL + MetadataPath }

// Metadata is the RFC 9728 document: the resource, its authorization
// server (Prickle itself), its scope, and that tokens go in the header only.
func (r *Resource) Metadata() map[string]any {
	return map[string]any{
		"resource":                 r.URL(),
		"authorization_servers":    []string{r.BaseURL},
		"scopes_supported":         []string{Scope},
		"bearer_methods_supported": []string{"header"},
		"resource_name":            "Prickle",
	}
}

// ServeHTTP answers GET (and HEAD) of the metadata, readable from any
// origin since it is public, and cacheable for a few minutes.
func (r *Resource) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	w.Header().Set("Access-Control-Allow-Origin", "*")
	if req.Method == http.MethodOptions {
		w.Header().Set("Access-Control-Allow-Methods", "GET")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	_ = json.NewEncoder(w).Encode(r.Metadata())
}

// Challenge is the WWW-Authenticate value of a 401: the metadata URL and
// scope always, and invalid_token when a token was sent.
func (r *Resource) Challenge(tokenSent bool) string {
	c := fmt.Sprintf(`Bearer realm="prickle", resource_metadata=%q, scope=%q`, r.MetadataURL(), Scope)
	if tokenSent {
		c += `, error="invalid_token", error_description="unknown, revoked or expired token, or one issued for another resource"`
	}
	return c
}

// ScopeChallenge is the WWW-Authenticate value of a 403 for too little scope.
func (r *Resource) ScopeChallenge() string {
	return fmt.Sprintf(`Bearer realm="prickle", error="insufficient_scope", scope=%q, resource_metadata=%q`, Scope, r.MetadataURL())
}

// IsAccessToken reports whether a bearer secret is one of Prickle's OAuth
// access tokens (rather than an agent or run token).
func IsAccessToken(secret string) bool { return strings.HasPrefix(secret, TokenPrefix) }

// Authenticate turns an OAuth access token into the agent it acts as:
// unknown, revoked, expired and other-audience tokens are all
// identity.ErrUnknownToken (401); a token without the scope is
// ErrInsufficientScope (403). The identity is the agent the owner chose at
// consent, as stored with the token, never anything the client sends.
func (r *Resource) Authenticate(ctx context.Context, secret string, now time.Time) (identity.Caller, error) {
	secret = strings.TrimSpace(secret)
	if !IsAccessToken(secret) || r.Tokens == nil {
		return identity.Caller{}, identity.ErrUnknownToken
	}
	t, err := r.Tokens.TokenByHash(ctx, identity.Hash(secret))
	if err != nil {
		return identity.Caller{}, err
	}
	if t.Kind != identity.KindOAuth || t.Revoked || t.ExpiresAt == nil || !now.Before(*t.ExpiresAt) || t.Audience != r.URL() {
		return identity.Caller{}, identity.ErrUnknownToken
	}
	if !slices.Contains(t.Scopes, Scope) {
		return identity.Caller{}, ErrInsufficientScope
	}
	owner, _, _ := strings.Cut(t.Agent, "/")
	return identity.Caller{Agent: t.Agent, Owner: owner, Kind: identity.KindOAuth,
		Projects: t.Projects, ProjectsKnown: t.ProjectsKnown}, nil
}
