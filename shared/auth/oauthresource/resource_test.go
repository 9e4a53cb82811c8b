package oauthresource_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/auth/oauthresource"
)

// tokens is a map-backed TokenLookup keyed by hash, as the directory stores them.
type tokens map[string]identity.Token

func (m tokens) TokenByHash(_ context.Context, hash string) (identity.Token, error) {
	t, ok := m[hash]
	if !ok {
		return identity.Token{}, identity.ErrUnknownToken
	}
	return t, nil
}

const base = "https://prickle.example"

var now = time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC)

func TestAuthenticate(t *testing.T) {
	later, earlier := now.Add(time.Hour), now.Add(-time.Second)
	good := identity.Token{Kind: identity.KindOAuth, Agent: "alice/claude-web", ExpiresAt: &later, Audience: base + "/mcp", Scopes: []string{"prickle"}, Client: "c1", Family: "f1"}
	with := func(f func(*identity.Token)) identity.Token { t := good; f(&t); return t }
	cases := []struct {
		name string
		tok  identity.Token
		want error
	}{
		{"valid", good, nil},
		{"other audience", with(func(t *identity.Token) { t.Audience = "https://evil.example/mcp" }), identity.ErrUnknownToken},
		{"audience of the issuer, not the resource", with(func(t *identity.Token) { t.Audience = base }), identity.ErrUnknownToken},
		{"expired", with(func(t *identity.Token) { t.ExpiresAt = &earlier }), identity.ErrUnknownToken},
		{"no expiry", with(func(t *identity.Token) { t.ExpiresAt = nil }), identity.ErrUnknownToken},
		{"revoked", with(func(t *identity.Token) { t.Revoked = true }), identity.ErrUnknownToken},
		{"an agent token's record", with(func(t *identity.Token) { t.Kind = identity.KindAgent }), identity.ErrUnknownToken},
		{"no scope", with(func(t *identity.Token) { t.Scopes = nil }), oauthresource.ErrInsufficientScope},
		{"other scope", with(func(t *identity.Token) { t.Scopes = []string{"read"} }), oauthresource.ErrInsufficientScope},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			secret := "prk_o_" + strings.ReplaceAll(c.name, " ", "-")
			r := oauthresource.New(base+"/", tokens{identity.Hash(secret): c.tok})
			got, err := r.Authenticate(context.Background(), secret, now)
			if !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
			if c.want == nil && (got.Agent != "alice/claude-web" || got.Owner != "alice" || got.Kind != identity.KindOAuth) {
				t.Errorf("caller = %+v", got)
			}
		})
	}
	r := oauthresource.New(base, tokens{identity.Hash("prk_a_x"): good})
	if _, err := r.Authenticate(context.Background(), "prk_a_x", now); !errors.Is(err, identity.ErrUnknownToken) {
		t.Errorf("a secret without the OAuth prefix: err = %v", err)
	}
}

func TestMetadataAndChallenges(t *testing.T) {
	r := oauthresource.New(base, nil)
	w := httptest.NewRecorder()
	r.ServeHTTP(w, httptest.NewRequest(http.MethodGet, oauthresource.MetadataPath, nil))
	var m struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
		Scopes               []string `json:"scopes_supported"`
		Bearer               []string `json:"bearer_methods_supported"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil || w.Code != 200 {
		t.Fatalf("HTTP %d %s", w.Code, w.Body.String())
	}
	if m.Resource != base+"/mcp" || len(m.AuthorizationServers) != 1 || m.AuthorizationServers[0] != base ||
		strings.Join(m.Scopes, ",") != "prickle" || strings.Join(m.Bearer, ",") != "header" {
		t.Errorf("metadata = %+v", m)
	}
	if w.Header().Get("Content-Type") != "application/json" {
		t.Errorf("Content-Type = %q", w.Header().Get("Content-Type"))
	}
	w = httptest.NewRecorder()
	r.ServeHTTP(w, httptest.NewRequest(http.MethodPost, oauthresource.MetadataPath, nil))
	if w.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST: HTTP %d", w.Code)
	}
	if c := r.Challenge(false); c != `Bearer realm="prickle", resource_metadata="`+base+`/.well-known/oauth-protected-resource/mcp", scope="prickle"` {
		t.Errorf("challenge without a token = %s", c)
	}
	if c := r.Challenge(true); !strings.Contains(c, `error="invalid_token"`) || !strings.Contains(c, "resource_metadata=") {
		t.Errorf("challenge with a token = %s", c)
	}
	if c := r.ScopeChallenge(); !strings.Contains(c, `error="insufficient_scope"`) || !strings.Contains(c, `scope="prickle"`) {
		t.Errorf("scope challenge = %s", c)
	}
}
