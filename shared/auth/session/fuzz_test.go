package session_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/auth/session"
)

// FuzzCookie: any string as a session cookie, a sign-in link token and a
// form token. Nothing panics; a cookie opens a session only if it is the
// cookie Start issued (its session recorded), a sign-in token checks only
// if it was issued for an owner and is unexpired, and form tokens are
// accepted only as the keys make them.
func FuzzCookie(f *testing.F) {
	k, err := session.NewKeys(secret)
	if err != nil {
		f.Fatal(err)
	}
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	st := newSessions()
	r := httptest.NewRequest("GET", "http://127.0.0.1/", nil)
	ck, err := k.Start(context.Background(), st, r, "alice", session.ViaEmail, now)
	if err != nil {
		f.Fatal(err)
	}
	link := k.SignInToken("alice", session.ViaEmail, now)
	for _, seed := range []string{ck.Value, link, ck.Value + "x", strings.Replace(ck.Value, ".", "", 1), "", ".", "e30.e30", "a.b.c", "\x00\xff"} {
		f.Add(seed, k.SignInFormToken(link))
	}
	f.Fuzz(func(t *testing.T, value, form string) {
		req := httptest.NewRequest("GET", "http://127.0.0.1/", nil)
		req.Header.Set("Cookie", session.CookieName+"="+value)
		s, ok, err := k.From(context.Background(), st, req, now)
		if err != nil {
			t.Fatalf("From(%q): %v", value, err)
		}
		if ok && (s.Owner != "alice" || req.Cookies()[0].Value != ck.Value) {
			t.Fatalf("cookie %q opened a session of %q; only the issued cookie may", value, s.Owner)
		}
		if ok && k.CheckFormToken(s, form) && form != k.FormToken(s) {
			t.Fatalf("session form token %q accepted", form)
		}
		if c, err := k.CheckSignIn(value, now); err == nil && (c.Owner == "" || c.Nonce == "" || !now.Before(c.Expires)) {
			t.Fatalf("sign-in token %q accepted with claims %+v", value, c)
		}
		if k.CheckSignInFormToken(value, form) && form != k.SignInFormToken(value) {
			t.Fatalf("sign-in form token %q accepted for %q", form, value)
		}
		_ = session.Client(&http.Request{RemoteAddr: value})
	})
}
