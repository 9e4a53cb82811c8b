//go:build integration

package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/team"
)

// mint stores a fresh token and returns its secret.
func mint(t *testing.T, f fixture, tok identity.Token) string {
	t.Helper()
	secret, err := identity.NewSecret(tok.Kind)
	if err != nil {
		t.Fatal(err)
	}
	tok.Hash = identity.Hash(secret)
	if err := f.store.PutToken(context.Background(), tok); err != nil {
		t.Fatal(err)
	}
	return secret
}

func TestTokensLookUpAndRevoke(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	now := base

	agentSecret := mint(t, f, identity.Token{Kind: identity.KindAgent, Agent: "bo/codex", CreatedAt: now})
	expires := now.Add(time.Hour)
	runSecret := mint(t, f, identity.Token{Kind: identity.KindRun, Agent: "bo/codex", TaskID: "t1", RunID: "r2", ResumesRun: "r1", ExpiresAt: &expires, CreatedAt: now})
	mint(t, f, identity.Token{Kind: identity.KindAgent, Agent: "bo/codex", Revoked: true, CreatedAt: now})
	otherSecret := mint(t, f, identity.Token{Kind: identity.KindAgent, Agent: "ana/claude", CreatedAt: now})

	got, err := f.store.TokenByHash(ctx, identity.Hash(runSecret))
	if err != nil {
		t.Fatal(err)
	}
	want := identity.Token{Hash: identity.Hash(runSecret), Kind: identity.KindRun, Agent: "bo/codex", TaskID: "t1", RunID: "r2", ResumesRun: "r1", ExpiresAt: &expires, CreatedAt: now}
	if asJSON(t, got) != asJSON(t, want) {
		t.Errorf("token\n got %s\nwant %s", asJSON(t, got), asJSON(t, want))
	}
	caller, err := identity.Authenticate(ctx, f.store, runSecret, now)
	if err != nil || caller.Agent != "bo/codex" || caller.Owner != "bo" || caller.TaskID != "t1" || caller.ResumesRun != "r1" {
		t.Errorf("run caller = %+v, %v", caller, err)
	}
	if _, err := identity.Authenticate(ctx, f.store, runSecret, expires); !errors.Is(err, identity.ErrUnknownToken) {
		t.Errorf("expired run token: err = %v, want ErrUnknownToken", err)
	}
	if _, err := identity.Authenticate(ctx, f.store, "prk_a_never-minted", now); !errors.Is(err, identity.ErrUnknownToken) {
		t.Errorf("unknown token: err = %v, want ErrUnknownToken", err)
	}

	if err := f.store.PutToken(ctx, identity.Token{Hash: identity.Hash(agentSecret), Kind: identity.KindAgent, Agent: "bo/codex", CreatedAt: now}); !errors.Is(err, team.ErrConflict) {
		t.Errorf("re-putting a token: err = %v, want ErrConflict", err)
	}
	if err := f.store.PutToken(ctx, identity.Token{Hash: agentSecret, Kind: identity.KindAgent, Agent: "bo/codex"}); err == nil {
		t.Error("a secret was accepted as a hash")
	}

	if err := f.store.RevokeToken(ctx, identity.Hash(otherSecret)); err != nil {
		t.Fatal(err)
	}
	if _, err := identity.Authenticate(ctx, f.store, otherSecret, now); !errors.Is(err, identity.ErrUnknownToken) {
		t.Errorf("revoked token: err = %v, want ErrUnknownToken", err)
	}
	if err := f.store.RevokeToken(ctx, identity.Hash("never minted")); !errors.Is(err, team.ErrNotFound) {
		t.Errorf("revoking an unknown token: err = %v, want ErrNotFound", err)
	}

	n, err := f.store.RevokeAgentTokens(ctx, "bo/codex")
	if err != nil || n != 2 {
		t.Errorf("RevokeAgentTokens = %d, %v; want 2 (the third was revoked already)", n, err)
	}
	for _, secret := range []string{agentSecret, runSecret} {
		if _, err := identity.Authenticate(ctx, f.store, secret, now); !errors.Is(err, identity.ErrUnknownToken) {
			t.Errorf("token of a revoked agent: err = %v, want ErrUnknownToken", err)
		}
	}
	if n, err := f.store.RevokeAgentTokens(ctx, "bo/codex"); err != nil || n != 0 {
		t.Errorf("revoking again = %d, %v; want 0", n, err)
	}
}
