package identity_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/auth/identity"
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

func TestNewSecret(t *testing.T) {
	cases := []struct {
		kind   string
		prefix string
	}{
		{identity.KindAgent, "prk_a_"},
		{identity.KindRun, "prk_r_"},
		{identity.KindOAuth, "prk_o_"},
	}
	for _, c := range cases {
		t.Run(c.kind, func(t *testing.T) {
			shape := regexp.MustCompile("^" + c.prefix + "[A-Za-z0-9_-]{43}$")
			seen := map[string]bool{}
			for range 100 {
				s, err := identity.NewSecret(c.kind)
				if err != nil {
					t.Fatal(err)
				}
				if !shape.MatchString(s) {
					t.Fatalf("secret %q does not look like %s + 32 random bytes (base64url)", s, c.prefix)
				}
				if seen[s] {
					t.Fatalf("secret %q minted twice", s)
				}
				seen[s] = true
			}
		})
	}
}

func TestHash(t *testing.T) {
	h := identity.Hash("prk_a_secret")
	if h != identity.Hash("prk_a_secret") {
		t.Error("Hash is not stable")
	}
	// sha256("prk_a_secret"), so stored hashes survive a refactor.
	if want := "65317d2e728a4b69c213e13a8c513e42d12e5cbbd7ac52ab46d83f874451fe06"; h != want {
		t.Errorf("Hash = %q, want hex sha256 %q", h, want)
	}
	if h == identity.Hash("prk_a_secreT") {
		t.Error("different secrets, same hash")
	}
	if h == "prk_a_secret" {
		t.Error("Hash returned the secret")
	}
}

func TestAuthenticate(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	later, earlier := now.Add(time.Minute), now.Add(-time.Minute)
	store := tokens{}
	add := func(secret string, tok identity.Token) string {
		tok.Hash = identity.Hash(secret)
		store[tok.Hash] = tok
		return secret
	}
	agent := add("prk_a_good", identity.Token{Kind: identity.KindAgent, Agent: "alice/writer"})
	run := add("prk_r_good", identity.Token{Kind: identity.KindRun, Agent: "bob/reviewer", TaskID: "tsk_1", RunID: "run_2", ResumesRun: "run_1", ExpiresAt: &later})
	revoked := add("prk_a_revoked", identity.Token{Kind: identity.KindAgent, Agent: "alice/writer", Revoked: true})
	expired := add("prk_r_expired", identity.Token{Kind: identity.KindRun, Agent: "bob/reviewer", TaskID: "tsk_1", RunID: "run_1", ExpiresAt: &earlier})
	member := add("prk_a_member", identity.Token{Kind: identity.KindAgent, Agent: "alice/writer", Projects: []string{"site"}, ProjectsKnown: true})
	expiresNow := add("prk_r_now", identity.Token{Kind: identity.KindRun, Agent: "bob/reviewer", TaskID: "tsk_1", RunID: "run_1", ExpiresAt: &now})

	cases := []struct {
		name   string
		secret string
		want   identity.Caller
		err    bool
	}{
		{name: "agent token", secret: agent, want: identity.Caller{Agent: "alice/writer", Owner: "alice", Kind: identity.KindAgent}},
		{name: "agent token with surrounding space", secret: "  " + agent + "\n", want: identity.Caller{Agent: "alice/writer", Owner: "alice", Kind: identity.KindAgent}},
		{name: "memberships come with the token", secret: member, want: identity.Caller{Agent: "alice/writer", Owner: "alice", Kind: identity.KindAgent, Projects: []string{"site"}, ProjectsKnown: true}},
		{name: "run token maps to its task and runs", secret: run, want: identity.Caller{Agent: "bob/reviewer", Owner: "bob", Kind: identity.KindRun, TaskID: "tsk_1", RunID: "run_2", ResumesRun: "run_1"}},
		{name: "empty", secret: "", err: true},
		{name: "blank", secret: "   ", err: true},
		{name: "unknown", secret: "prk_a_nope", err: true},
		{name: "revoked", secret: revoked, err: true},
		{name: "expired", secret: expired, err: true},
		{name: "expiring this instant", secret: expiresNow, err: true},
		{name: "the stored hash is not a secret", secret: identity.Hash(agent), err: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := identity.Authenticate(context.Background(), store, c.secret, now)
			if c.err {
				if !errors.Is(err, identity.ErrUnknownToken) {
					t.Errorf("Authenticate = %+v, %v; want ErrUnknownToken", got, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Authenticate: %v", err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("caller = %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestAuthenticatePassesLookupFailuresOn(t *testing.T) {
	boom := errors.New("table unavailable")
	_, err := identity.Authenticate(context.Background(), failing{boom}, "prk_a_x", time.Now())
	if !errors.Is(err, boom) {
		t.Errorf("err = %v, want the lookup's error", err)
	}
}

type failing struct{ err error }

func (f failing) TokenByHash(context.Context, string) (identity.Token, error) {
	return identity.Token{}, fmt.Errorf("lookup: %w", f.err)
}

// TestAuthenticateRefusesOAuthTokens: an OAuth access token is valid only
// for the resource it was issued for, so the agent-token path refuses it
// even when it is live.
func TestAuthenticateRefusesOAuthTokens(t *testing.T) {
	now := time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC)
	exp := now.Add(time.Hour)
	secret := "prk_o_live"
	m := tokens{identity.Hash(secret): {Kind: identity.KindOAuth, Agent: "alice/claude-web", ExpiresAt: &exp, Audience: "https://x.example/mcp", Scopes: []string{"prickle"}}}
	if _, err := identity.Authenticate(context.Background(), m, secret, now); !errors.Is(err, identity.ErrUnknownToken) {
		t.Fatalf("err = %v, want ErrUnknownToken", err)
	}
}
