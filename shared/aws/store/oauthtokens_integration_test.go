//go:build integration

package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/auth/oauthresource"
)

// TestOAuthAccessTokensLookUpAndFamilyRevoke: an OAuth access token is
// stored by hash with its client, audience, scopes and family; the resource
// accepts it for its own audience only; revoking a family ends its tokens
// and no other.
func TestOAuthAccessTokensLookUpAndFamilyRevoke(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	now := base
	exp := now.Add(time.Hour)
	oauth := func(family string) identity.Token {
		return identity.Token{Kind: identity.KindOAuth, Agent: "bo/claude-web", ExpiresAt: &exp, CreatedAt: now,
			Client: "client-1", Audience: "https://prickle.example/mcp", Scopes: []string{oauthresource.Scope}, Family: family}
	}
	first := mint(t, f, oauth("fam-1"))
	second := mint(t, f, oauth("fam-1"))
	other := mint(t, f, oauth("fam-2"))
	agent := mint(t, f, identity.Token{Kind: identity.KindAgent, Agent: "bo/claude-web", CreatedAt: now})

	got, err := f.store.TokenByHash(ctx, identity.Hash(first))
	if err != nil {
		t.Fatal(err)
	}
	if got.Client != "client-1" || got.Audience != "https://prickle.example/mcp" || got.Family != "fam-1" || len(got.Scopes) != 1 || got.Kind != identity.KindOAuth {
		t.Errorf("stored OAuth token = %+v", got)
	}
	here := oauthresource.New("https://prickle.example", f.store)
	if c, err := here.Authenticate(ctx, first, now); err != nil || c.Agent != "bo/claude-web" {
		t.Errorf("this resource: %+v, %v", c, err)
	}
	if _, err := oauthresource.New("https://other.example", f.store).Authenticate(ctx, first, now); !errors.Is(err, identity.ErrUnknownToken) {
		t.Errorf("another resource: err = %v, want ErrUnknownToken", err)
	}
	if _, err := identity.Authenticate(ctx, f.store, first, now); !errors.Is(err, identity.ErrUnknownToken) {
		t.Errorf("the agent-token path: err = %v, want ErrUnknownToken", err)
	}
	if err := f.store.PutToken(ctx, identity.Token{Hash: identity.Hash("prk_o_x"), Kind: identity.KindOAuth, Agent: "bo/claude-web"}); err == nil {
		t.Error("an OAuth token without expiry, audience, client or family was stored")
	}

	n, err := f.store.RevokeTokenFamily(ctx, "bo/claude-web", "fam-1")
	if err != nil || n != 2 {
		t.Fatalf("RevokeTokenFamily = %d, %v, want 2", n, err)
	}
	for _, s := range []string{first, second} {
		if _, err := here.Authenticate(ctx, s, now); !errors.Is(err, identity.ErrUnknownToken) {
			t.Errorf("revoked family token: err = %v", err)
		}
	}
	if _, err := here.Authenticate(ctx, other, now); err != nil {
		t.Errorf("the other family: %v", err)
	}
	if _, err := identity.Authenticate(ctx, f.store, agent, now); err != nil {
		t.Errorf("the agent token: %v", err)
	}
}
