package session_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/auth/session"
	"github.com/useprickle/prickle/shared/auth/signed"
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

// sessions is an in-memory session.Sessions.
type sessions struct {
	mu   sync.Mutex
	live map[string]map[string]bool // owner → session id → recorded
	fail error
}

func newSessions() *sessions { return &sessions{live: map[string]map[string]bool{}} }

func (s *sessions) StartSession(_ context.Context, owner, id string, _ time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.live[owner] == nil {
		s.live[owner] = map[string]bool{}
	}
	s.live[owner][id] = true
	return nil
}

func (s *sessions) SessionActive(_ context.Context, owner, id string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.live[owner][id], s.fail
}

func (s *sessions) EndSession(_ context.Context, owner, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.live[owner], id)
	return nil
}

func (s *sessions) EndOwnerSessions(_ context.Context, owner string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.live, owner)
	return nil
}

func start(t *testing.T, k session.Keys, st session.Sessions, r *http.Request, owner string, now time.Time) *http.Cookie {
	t.Helper()
	return startBy(t, k, st, r, owner, session.ViaEmail, now)
}

// startBy starts a session of owner signed in by a link sent by via.
func startBy(t *testing.T, k session.Keys, st session.Sessions, r *http.Request, owner, via string, now time.Time) *http.Cookie {
	t.Helper()
	ck, err := k.Start(context.Background(), st, r, owner, via, now)
	if err != nil {
		t.Fatal(err)
	}
	return ck
}

func from(k session.Keys, st session.Sessions, r *http.Request, now time.Time) (session.Session, bool) {
	s, ok, _ := k.From(context.Background(), st, r, now)
	return s, ok
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
	tok := k.SignInToken("alice", session.ViaEmail, now)
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
	late := k.SignInToken("alice", session.ViaEmail, now)
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
	tok := k.SignInToken("alice", session.ViaEmail, now)
	payload, sig, _ := strings.Cut(tok, ".")
	for name, bad := range map[string]string{
		"empty": "", "no dot": payload, "flipped sig": payload + "." + strings.Repeat("A", len(sig)),
		"other payload": k.SignInToken("bob", session.ViaEmail, now)[:len(payload)] + "." + sig,
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
	st := newSessions()
	ck := start(t, k, st, r, "alice", now)
	if _, err := k.CheckSignIn(ck.Value, now); !errors.Is(err, session.ErrInvalid) {
		t.Errorf("session as sign-in: %v", err)
	}
	// And a sign-in link is not a session.
	r.AddCookie(&http.Cookie{Name: session.CookieName, Value: tok})
	if _, ok := from(k, st, r, now); ok {
		t.Error("a sign-in token was accepted as a session")
	}
}

func TestSessionCookie(t *testing.T) {
	k := keys(t)
	now := time.Now()
	st := newSessions()
	for _, c := range []struct {
		url    string
		secure bool
	}{{"http://127.0.0.1:3000/", false}, {"http://localhost:3000/", false}, {"http://[::1]:3000/", false}, {"https://app.useprickle.dev/", true}} {
		r := httptest.NewRequest("POST", c.url, nil)
		ck := start(t, k, st, r, "alice", now)
		if !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode || ck.Secure != c.secure || ck.Path != "/" || ck.MaxAge != 12*3600 {
			t.Errorf("%s: cookie %+v", c.url, ck)
		}
		got := httptest.NewRequest("GET", c.url, nil)
		got.AddCookie(ck)
		s, ok := from(k, st, got, now.Add(time.Hour))
		if !ok || s.Owner != "alice" {
			t.Errorf("%s: session %+v %v", c.url, s, ok)
		}
		if _, ok := from(k, st, got, now.Add(session.SessionLifetime)); ok {
			t.Errorf("%s: session valid after 12 h", c.url)
		}
		tok := k.FormToken(s)
		if !k.CheckFormToken(s, tok) || k.CheckFormToken(s, tok+"x") || k.CheckFormToken(session.Session{Owner: "alice"}, tok) {
			t.Errorf("%s: form token checks wrong", c.url)
		}
	}
}

func TestSessionIsRevocable(t *testing.T) {
	k := keys(t)
	now := time.Now()
	ctx := context.Background()
	st := newSessions()
	r := httptest.NewRequest("POST", "http://127.0.0.1/", nil)
	open := func(ck *http.Cookie) (session.Session, bool) {
		got := httptest.NewRequest("GET", "http://127.0.0.1/", nil)
		got.AddCookie(ck)
		return from(k, st, got, now)
	}
	laptop, phone, tablet := start(t, k, st, r, "alice", now), start(t, k, st, r, "alice", now), start(t, k, st, r, "alice", now)
	bob := start(t, k, st, r, "bob", now)
	s, ok := open(laptop)
	if !ok {
		t.Fatal("a fresh session is refused")
	}
	// Signing out ends this session only.
	cleared, err := session.End(ctx, st, r, s)
	if err != nil || cleared.MaxAge >= 0 || cleared.Value != "" || !cleared.HttpOnly {
		t.Fatalf("End = %+v, %v", cleared, err)
	}
	if _, ok := open(laptop); ok {
		t.Error("the signed-out cookie still opens a session")
	}
	p, ok := open(phone)
	if !ok {
		t.Fatal("signing out on the laptop ended the phone's session")
	}
	// Signing out everywhere ends every session of the owner, nobody else's.
	if _, err := session.EndAll(ctx, st, r, p); err != nil {
		t.Fatal(err)
	}
	for name, ck := range map[string]*http.Cookie{"phone": phone, "tablet": tablet} {
		if _, ok := open(ck); ok {
			t.Errorf("%s still signed in after signing out everywhere", name)
		}
	}
	if _, ok := open(bob); !ok {
		t.Error("alice signing out everywhere ended bob's session")
	}
	// A validly signed cookie whose session was never recorded (minted
	// before sessions were recorded) opens nothing.
	if _, ok := open(start(t, k, newSessions(), r, "bob", now)); ok {
		t.Error("an unrecorded session was accepted")
	}
	// A session that cannot be checked opens nothing, and says why.
	st.fail = errors.New("table unavailable")
	got := httptest.NewRequest("GET", "http://127.0.0.1/", nil)
	got.AddCookie(bob)
	if _, ok, err := k.From(ctx, st, got, now); ok || err == nil || !strings.Contains(err.Error(), "table unavailable") {
		t.Errorf("store failure: ok %v, err %v", ok, err)
	}
}

// lastCharTwin returns s with its last character replaced by one that a
// lenient base64 decoder reads as the same bytes (only the unused low bits
// differ), or false when s's length leaves no unused bits.
func lastCharTwin(s string) (string, bool) {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	if len(s)%4 != 2 && len(s)%4 != 3 {
		return "", false
	}
	i := strings.IndexByte(alphabet, s[len(s)-1])
	return s[:len(s)-1] + string(alphabet[i^1]), true
}

func TestLenientBase64Refused(t *testing.T) {
	k := keys(t)
	now := time.Now()
	tok := k.SignInToken("alice", session.ViaEmail, now)
	payload, sig, _ := strings.Cut(tok, ".")
	twin, ok := lastCharTwin(sig)
	if !ok {
		t.Fatalf("a %d-character signature has no unused bits", len(sig))
	}
	if _, err := k.CheckSignIn(payload+"."+twin, now); !errors.Is(err, session.ErrInvalid) {
		t.Errorf("sign-in link with another last character: %v, want ErrInvalid", err)
	}
	if form, _ := lastCharTwin(k.SignInFormToken(tok)); k.CheckSignInFormToken(tok, form) {
		t.Error("sign-in form token with another last character accepted")
	}
	// Go's decoders skip line breaks even when strict (found by FuzzVerify in shared/auth/link).
	if _, err := k.CheckSignIn(payload[:4]+"\n"+payload[4:]+"."+sig, now); !errors.Is(err, session.ErrInvalid) {
		t.Errorf("sign-in link with a line break: %v, want ErrInvalid", err)
	}
	if form := k.SignInFormToken(tok); k.CheckSignInFormToken(tok, form[:3]+"\r\n"+form[3:]) {
		t.Error("sign-in form token with a line break accepted")
	}

	r := httptest.NewRequest("GET", "http://127.0.0.1/", nil)
	st := newSessions()
	ck := start(t, k, st, r, "alice", now)
	p, s, _ := strings.Cut(ck.Value, ".")
	twin, _ = lastCharTwin(s)
	r.AddCookie(&http.Cookie{Name: session.CookieName, Value: p + "." + twin})
	if _, ok := from(k, st, r, now); ok {
		t.Error("session cookie with another last character of its signature opened a session")
	}
	good := httptest.NewRequest("GET", "http://127.0.0.1/", nil)
	good.AddCookie(ck)
	sess, ok := from(k, st, good, now)
	if !ok {
		t.Fatal("the cookie itself was refused")
	}
	if form, _ := lastCharTwin(k.FormToken(sess)); k.CheckFormToken(sess, form) {
		t.Error("session form token with another last character accepted")
	}
}

// derived is a key of NewKeys (its derivation, as the e2e suite does it), to
// sign claims the package itself would not.
func derived(label string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("prickle " + label + " v1"))
	return m.Sum(nil)
}

// TestWhereTheLinkWentIsSignedAndKept: a sign-in link says, signed, where it
// was sent, and the session it opens keeps it; a link or a cookie that names
// no destination (minted before they did: the link may have been posted to a
// Slack channel others read) is refused.
func TestWhereTheLinkWentIsSignedAndKept(t *testing.T) {
	k := keys(t)
	now := time.Now()
	ctx := context.Background()
	st := newSessions()
	for via, how := range map[string]string{session.ViaEmail: "email link", session.ViaSlackDM: "Slack DM link", session.ViaConsole: "link printed by make local"} {
		c, err := k.UseSignIn(ctx, &markers{used: map[string]bool{}}, k.SignInToken("alice", via, now), now)
		if err != nil || c.Via != via {
			t.Fatalf("link sent by %s: claims %+v, %v", via, c, err)
		}
		r := httptest.NewRequest("GET", "http://127.0.0.1/", nil)
		r.AddCookie(startBy(t, k, st, r, "alice", c.Via, now))
		s, ok := from(k, st, r, now)
		if !ok || s.Via != via || s.SignedInBy() != how {
			t.Errorf("session signed in by %s: %+v (%q), %v", via, s, s.SignedInBy(), ok)
		}
	}
	if _, err := k.Start(ctx, st, httptest.NewRequest("GET", "http://127.0.0.1/", nil), "alice", "slack_channel", now); err == nil {
		t.Error("a session was started for a link sent to a Slack channel")
	}
	legacy := signed.Sign(derived("sign-in link"), map[string]any{"kind": "signin", "owner": "alice", "exp": now.Add(time.Minute), "nonce": "n0"})
	if _, err := k.CheckSignIn(legacy, now); !errors.Is(err, session.ErrInvalid) {
		t.Errorf("a sign-in link that names no destination: %v, want ErrInvalid", err)
	}
	for _, via := range []string{"", "slack"} {
		claims := map[string]any{"kind": "session", "owner": "alice", "exp": now.Add(time.Hour), "nonce": "s-" + via, "via": via}
		if err := st.StartSession(ctx, "alice", "s-"+via, now.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		r := httptest.NewRequest("GET", "http://127.0.0.1/", nil)
		r.AddCookie(&http.Cookie{Name: session.CookieName, Value: signed.Sign(derived("session cookie"), claims)})
		if s, ok := from(k, st, r, now); ok {
			t.Errorf("a recorded session whose cookie says it was signed in by %q opened: %+v", via, s)
		}
	}
}
