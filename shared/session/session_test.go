package session_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/session"
)

var secret = []byte("0123456789abcdef0123456789abcdef")

type markers struct {
	mu   sync.Mutex
	used map[string]bool
}

func (m *markers) UseSignIn(_ context.Context, nonce string, _ time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.used[nonce] {
		return false, nil
	}
	m.used[nonce] = true
	return true, nil
}

func keys(t *testing.T) session.Keys {
	t.Helper()
	k, err := session.NewKeys(secret)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestShortKeyRefused(t *testing.T) {
	if _, err := session.NewKeys([]byte("short")); err == nil {
		t.Fatal("a 5-byte key was accepted")
	}
}

func TestSignInLinkIsSingleUseAndExpires(t *testing.T) {
	k := keys(t)
	m := &markers{used: map[string]bool{}}
	now := time.Now()
	tok := k.SignInToken("alice", now)
	if c, err := k.CheckSignIn(tok, now); err != nil || c.Owner != "alice" {
		t.Fatalf("check: %+v %v", c, err)
	}
	// Checking does not use it.
	if _, err := k.CheckSignIn(tok, now); err != nil {
		t.Fatal(err)
	}
	if c, err := k.UseSignIn(context.Background(), m, tok, now); err != nil || c.Owner != "alice" {
		t.Fatalf("first use: %+v %v", c, err)
	}
	if _, err := k.UseSignIn(context.Background(), m, tok, now); !errors.Is(err, session.ErrUsed) {
		t.Fatalf("second use: %v, want ErrUsed", err)
	}
	late := k.SignInToken("alice", now)
	if _, err := k.UseSignIn(context.Background(), m, late, now.Add(session.LinkLifetime)); !errors.Is(err, session.ErrExpired) {
		t.Fatalf("after 15 min: %v, want ErrExpired", err)
	}
	if _, err := k.CheckSignIn(late, now.Add(session.LinkLifetime-time.Second)); err != nil {
		t.Fatalf("just before 15 min: %v", err)
	}
}

func TestTamperedAndCrossKindTokensRefused(t *testing.T) {
	k := keys(t)
	now := time.Now()
	tok := k.SignInToken("alice", now)
	payload, sig, _ := strings.Cut(tok, ".")
	for name, bad := range map[string]string{
		"empty": "", "no dot": payload, "flipped sig": payload + "." + strings.Repeat("A", len(sig)),
		"other payload": k.SignInToken("bob", now)[:len(payload)] + "." + sig,
	} {
		if _, err := k.CheckSignIn(bad, now); !errors.Is(err, session.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	other, _ := session.NewKeys([]byte("another secret of at least 32 bytes!!"))
	if _, err := other.CheckSignIn(tok, now); !errors.Is(err, session.ErrInvalid) {
		t.Errorf("other key: %v", err)
	}
	// A session cookie is not a sign-in link.
	r := httptest.NewRequest("GET", "http://127.0.0.1/", nil)
	ck := k.Start(r, "alice", now)
	if _, err := k.CheckSignIn(ck.Value, now); !errors.Is(err, session.ErrInvalid) {
		t.Errorf("session as sign-in: %v", err)
	}
	// And a sign-in link is not a session.
	r.AddCookie(&http.Cookie{Name: session.CookieName, Value: tok})
	if _, ok := k.From(r, now); ok {
		t.Error("a sign-in token was accepted as a session")
	}
}

func TestSessionCookie(t *testing.T) {
	k := keys(t)
	now := time.Now()
	for _, c := range []struct {
		url    string
		secure bool
	}{{"http://127.0.0.1:3000/", false}, {"http://localhost:3000/", false}, {"http://[::1]:3000/", false}, {"https://app.useprickle.dev/", true}} {
		r := httptest.NewRequest("POST", c.url, nil)
		ck := k.Start(r, "alice", now)
		if !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode || ck.Secure != c.secure || ck.Path != "/" || ck.MaxAge != 12*3600 {
			t.Errorf("%s: cookie %+v", c.url, ck)
		}
		got := httptest.NewRequest("GET", c.url, nil)
		got.AddCookie(ck)
		s, ok := k.From(got, now.Add(time.Hour))
		if !ok || s.Owner != "alice" {
			t.Errorf("%s: session %+v %v", c.url, s, ok)
		}
		if _, ok := k.From(got, now.Add(session.SessionLifetime)); ok {
			t.Errorf("%s: session valid after 12 h", c.url)
		}
		tok := k.FormToken(s)
		if !k.CheckFormToken(s, tok) || k.CheckFormToken(s, tok+"x") || k.CheckFormToken(session.Session{Owner: "alice"}, tok) {
			t.Errorf("%s: form token checks wrong", c.url)
		}
	}
}
