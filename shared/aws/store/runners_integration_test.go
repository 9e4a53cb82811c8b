//go:build integration

package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/auth/oauthstate"
)

// TestJoinedRunners: a runner joined by the device grant is listed for its
// owner only (and never as a connected application), newest first; only its
// owner revokes it, which revokes its token at once; an id is stored once.
func TestJoinedRunners(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	secret := mint(t, f, identity.Token{Kind: identity.KindAgent, Agent: "bo/writer", CreatedAt: base})
	older := oauthstate.JoinedRunner{ID: "rnr_old", Owner: "bo", Agent: "bo/writer", Name: "box", TokenHash: identity.Hash(mint(t, f,
		identity.Token{Kind: identity.KindAgent, Agent: "bo/writer", CreatedAt: base})), CreatedAt: base}
	newer := oauthstate.JoinedRunner{ID: "rnr_new", Owner: "bo", Agent: "bo/writer", Name: "laptop", TokenHash: identity.Hash(secret), CreatedAt: base.Add(time.Minute)}
	for _, r := range []oauthstate.JoinedRunner{older, newer} {
		if err := f.store.PutJoinedRunner(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.store.PutJoinedRunner(ctx, newer); err == nil {
		t.Error("a runner id was stored twice")
	}
	if err := f.store.PutOAuthConnection(ctx, oauthstate.Connection{ID: "grant-1", Owner: "bo", Agent: "bo/writer", Client: "c", ClientName: "C", CreatedAt: base}); err != nil {
		t.Fatal(err)
	}
	got, err := f.store.OwnerJoinedRunners(ctx, "bo")
	if err != nil || len(got) != 2 || got[0].ID != "rnr_new" || got[1].ID != "rnr_old" || got[0].Name != "laptop" || got[0].TokenHash != newer.TokenHash {
		t.Fatalf("OwnerJoinedRunners = %+v, %v", got, err)
	}
	if conns, err := f.store.OwnerOAuthConnections(ctx, "bo"); err != nil || len(conns) != 1 || conns[0].ID != "grant-1" {
		t.Fatalf("OwnerOAuthConnections = %+v, %v: runners are not connected applications", conns, err)
	}
	if others, _ := f.store.OwnerJoinedRunners(ctx, "al"); len(others) != 0 {
		t.Fatalf("another owner's list = %+v", others)
	}
	if _, err := f.store.RevokeJoinedRunner(ctx, "al", "rnr_new"); !errors.Is(err, oauthstate.ErrNotFound) {
		t.Fatalf("another owner revoking: %v, want ErrNotFound", err)
	}
	if _, err := identity.Authenticate(ctx, f.store, secret, base); err != nil {
		t.Fatalf("before revoking: %v", err)
	}
	r, err := f.store.RevokeJoinedRunner(ctx, "bo", "rnr_new")
	if err != nil || !r.Revoked || r.TokenHash != newer.TokenHash {
		t.Fatalf("RevokeJoinedRunner = %+v, %v", r, err)
	}
	if _, err := identity.Authenticate(ctx, f.store, secret, base); !errors.Is(err, identity.ErrUnknownToken) {
		t.Fatalf("the revoked runner's token: %v, want ErrUnknownToken", err)
	}
	if _, err := f.store.RevokeJoinedRunner(ctx, "bo", "rnr_new"); err != nil {
		t.Fatalf("revoking again: %v", err)
	}
	if _, err := f.store.RevokeJoinedRunner(ctx, "bo", "rnr_nope"); !errors.Is(err, oauthstate.ErrNotFound) {
		t.Fatalf("an unknown runner: %v, want ErrNotFound", err)
	}
}

// TestOAuthAttemptsAreCountedPerWindow: a counter allows max attempts in its
// window, refuses the next, and starts again in the next window; counters are apart.
func TestOAuthAttemptsAreCountedPerWindow(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for i := range 3 {
		if ok, err := f.store.AllowOAuthAttempt(ctx, "device#owner#bo", 3, 10*time.Minute, base.Add(time.Duration(i)*time.Second)); err != nil || !ok {
			t.Fatalf("attempt %d: %v %v", i, ok, err)
		}
	}
	if ok, err := f.store.AllowOAuthAttempt(ctx, "device#owner#bo", 3, 10*time.Minute, base.Add(time.Minute)); err != nil || ok {
		t.Fatalf("attempt past max: %v %v", ok, err)
	}
	if ok, _ := f.store.AllowOAuthAttempt(ctx, "device#owner#al", 3, 10*time.Minute, base.Add(time.Minute)); !ok {
		t.Fatal("another counter was refused")
	}
	if ok, _ := f.store.AllowOAuthAttempt(ctx, "device#owner#bo", 3, 10*time.Minute, base.Add(10*time.Minute)); !ok {
		t.Fatal("the next window was refused")
	}
}
