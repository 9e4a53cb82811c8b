//go:build integration

package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/auth/oauthstate"
	"github.com/useprickle/prickle/shared/auth/session"
)

// TestStrangersUseUpANamesSignInLinks is the documented bound of sign-in:
// LinksPerName / LinksPerNamePerClient addresses (4) use up a name's links
// of a window, and the owner's own request is refused. ReopenSignIn gives
// the owner the name back at once; the addresses that used it up stay refused
// until the window ends.
func TestStrangersUseUpANamesSignInLinks(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 9, 3, 0, 0, time.UTC)
	strangers := session.LinksPerName / session.LinksPerNamePerClient
	ask := func(client string) session.SignInLimit {
		t.Helper()
		limit, err := f.store.AllowSignInRequest(ctx, "alice", client, now)
		if err != nil {
			t.Fatal(err)
		}
		return limit
	}
	for i := range strangers {
		for range session.LinksPerNamePerClient {
			if got := ask(fmt.Sprintf("198.51.100.%d", i+1)); got != session.WithinLimits {
				t.Fatalf("stranger %d: %q before the name's links were used up", i+1, got)
			}
		}
	}
	if got := ask("203.0.113.7"); got != session.NameLimit {
		t.Fatalf("alice's own request after %d strangers: %q, want %q", strangers, got, session.NameLimit)
	}
	n, err := f.store.ReopenSignIn(ctx, "alice", now.Add(time.Minute))
	if err != nil || n != session.LinksPerName {
		t.Fatalf("ReopenSignIn = %d, %v; want %d cleared", n, err, session.LinksPerName)
	}
	if got := ask("203.0.113.7"); got != session.WithinLimits {
		t.Errorf("alice's own request after reopening: %q", got)
	}
	if got := ask("198.51.100.1"); got != session.NameFromClientLimit {
		t.Errorf("a stranger's address after reopening: %q, want %q for the rest of the window", got, session.NameFromClientLimit)
	}
	if n, err := f.store.ReopenSignIn(ctx, "bob", now); err != nil || n != 0 {
		t.Errorf("ReopenSignIn of a name nobody asked for = %d, %v", n, err)
	}
}

// TestReopenSignInFromOneAddress: an owner's own address that used up its
// allowance for the name (an office behind one address, the local stack's
// loopback) is given back by ReopenSignInFrom for that address only; another
// address's counts stay.
func TestReopenSignInFromOneAddress(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 9, 3, 0, 0, time.UTC)
	ask := func(client string) session.SignInLimit {
		t.Helper()
		limit, err := f.store.AllowSignInRequest(ctx, "alice", client, now)
		if err != nil {
			t.Fatal(err)
		}
		return limit
	}
	for _, client := range []string{"127.0.0.1", "198.51.100.9"} {
		for range session.LinksPerNamePerClient {
			if got := ask(client); got != session.WithinLimits {
				t.Fatalf("%s: %q before its allowance was used up", client, got)
			}
		}
		if got := ask(client); got != session.NameFromClientLimit {
			t.Fatalf("%s past its allowance: %q, want %q", client, got, session.NameFromClientLimit)
		}
	}
	n, err := f.store.ReopenSignInFrom(ctx, "alice", "127.0.0.1", now)
	// The address's own count holds all its requests, its count for alice the ones within it.
	if want := (session.LinksPerNamePerClient + 1) + session.LinksPerNamePerClient; err != nil || n != want {
		t.Fatalf("ReopenSignInFrom = %d, %v; want the address's two counts (%d) cleared", n, err, want)
	}
	if got := ask("127.0.0.1"); got != session.WithinLimits {
		t.Errorf("the reopened address: %q", got)
	}
	if got := ask("198.51.100.9"); got != session.NameFromClientLimit {
		t.Errorf("another address after reopening one: %q, want %q", got, session.NameFromClientLimit)
	}
}

// TestNetworksFillTheRegistrations is the documented bound of dynamic
// registration: RegistrationsOverall / RegistrationsPerNetwork networks (25)
// fill a window, and a client on another network is refused.
// ReopenOAuthRegistrations accepts registrations again at once; the networks
// that filled it stay refused until the window ends.
func TestNetworksFillTheRegistrations(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 9, 3, 0, 0, time.UTC)
	networks := oauthstate.RegistrationsOverall / oauthstate.RegistrationsPerNetwork
	register := func(network string) bool {
		t.Helper()
		ok, err := f.store.AllowOAuthRegistration(ctx, network, now)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	for i := range networks {
		for range oauthstate.RegistrationsPerNetwork {
			if !register(fmt.Sprintf("net-%d", i)) {
				t.Fatalf("network %d refused before the window was full", i)
			}
		}
	}
	if register("another-net") {
		t.Fatalf("a registration after %d networks filled the window was accepted", networks)
	}
	n, err := f.store.ReopenOAuthRegistrations(ctx, now.Add(time.Minute))
	if err != nil || n != oauthstate.RegistrationsOverall {
		t.Fatalf("ReopenOAuthRegistrations = %d, %v; want %d cleared", n, err, oauthstate.RegistrationsOverall)
	}
	if !register("another-net") {
		t.Error("a registration from another network after reopening was refused")
	}
	if register("net-0") {
		t.Error("a network that filled the window was accepted after reopening")
	}
}
