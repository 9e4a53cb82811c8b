// Package session signs owners in to Prickle's pages: a sign-in link sent
// only where it reaches the owner alone (email, a Slack direct message to the
// owner's member id), single use and valid for LinkLifetime, and the session
// cookie it sets (HMAC-signed, SessionLifetime). Both say, signed, where the link was
// sent (Via), so every decision made with a session can say how it was signed in.
//
// Both are base64url(JSON claims) "." base64url(HMAC-SHA256), encoded and
// checked by shared/auth/signed like approval links (shared/auth/link), under keys derived from the same secret with distinct
// labels, so a sign-in token is never a session and neither is an approval
// link. A sign-in token is single use because its nonce is recorded when it
// is used (a conditional put in the directory table, see Markers).
//
// A session is also revocable: its nonce is the session id, recorded when
// the owner signs in (Sessions, an item in the directory table that DynamoDB's
// TTL drops when the session expires). A cookie opens pages only while its
// item exists, so signing out (End) or signing out everywhere (EndAll)
// refuses the cookie at once although its signature still holds. A cookie
// minted before sessions were recorded has no item and is refused too.
package session

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/useprickle/prickle/shared/auth/signed"
)

// Lifetimes of a sign-in link and of the session it opens.
const (
	LinkLifetime    = 15 * time.Minute
	SessionLifetime = 12 * time.Hour
)

// CookieName is the session cookie.
const CookieName = "prickle_session"

// MinKeyLength is the shortest secret accepted, as for approval links.
const MinKeyLength = 32

// ErrInvalid means a token or cookie is malformed or not signed by this key.
var ErrInvalid = errors.New("sign-in link is not valid: it was changed or not issued by Prickle")

// ErrExpired means the token was valid but its time is up.
var ErrExpired = errors.New("sign-in link expired")

// ErrUsed means the sign-in link was used before.
var ErrUsed = errors.New("sign-in link was already used")

// Markers remembers used sign-in links; *store.Store satisfies it.
type Markers interface {
	// UseSignIn records nonce as used; first is false when it was used before.
	UseSignIn(ctx context.Context, nonce string, expires time.Time) (first bool, err error)
}

// Sessions records the sessions that may open pages; *store.Store satisfies it.
// The id is a secret bearer value: implementations never log it.
type Sessions interface {
	// StartSession records the session id of owner until expires.
	StartSession(ctx context.Context, owner, id string, expires time.Time) error
	// SessionActive reports whether the session is recorded (strongly consistent).
	SessionActive(ctx context.Context, owner, id string) (bool, error)
	// EndSession forgets one session; ending an unknown one is not an error.
	EndSession(ctx context.Context, owner, id string) error
	// EndOwnerSessions forgets every session of owner.
	EndOwnerSessions(ctx context.Context, owner string) error
}

// Where a sign-in link was sent: its token says it, signed, and so does the
// session it opens. A token or cookie that names none of these (minted before
// they did) is refused: its link may have been posted where others read it.
const (
	ViaEmail   = "email"    // emailed to the owner
	ViaSlackDM = "slack_dm" // a Slack direct message to the owner's member id
	ViaConsole = "console"  // printed by `make local` on the terminal that started the stack
)

// signedInBy is how each Via reads in the audit trail and on the pages.
var signedInBy = map[string]string{
	ViaEmail:   "email link",
	ViaSlackDM: "Slack DM link",
	ViaConsole: "link printed by make local",
}

// Claims is what a sign-in token or a session says: who, until when, and
// where the sign-in link was sent. (A session is no approval link, though
// both say whom they are for alike: each token has its own kinds and key.)
type Claims struct {
	Kind string `json:"kind"` // signin or session
	signed.Holder
}

const (
	kindSignIn  = "signin"
	kindSession = "session"
)

// Keys signs sign-in tokens, sessions and the form tokens of signed-in pages.
type Keys struct {
	signin, session, form []byte
}

// NewKeys derives the three keys from one secret (the approval links' key).
func NewKeys(secret []byte) (Keys, error) {
	if len(secret) < MinKeyLength {
		return Keys{}, fmt.Errorf("session key is %d bytes; sign-in needs at least %d", len(secret), MinKeyLength)
	}
	derive := func(label string) []byte {
		m := hmac.New(sha256.New, secret)
		m.Write([]byte("prickle " + label + " v1"))
		return m.Sum(nil)
	}
	return Keys{signin: derive("sign-in link"), session: derive("session cookie"), form: derive("session form")}, nil
}

func nonce() string { return signed.Nonce(16) }

func sign(key []byte, c Claims) string {
	c.Expires = c.Expires.UTC()
	return signed.Sign(key, c)
}

func verify(key []byte, kind, token string, now time.Time) (Claims, error) {
	var c Claims
	if err := signed.Open(key, token, &c); err != nil || c.Kind != kind || c.Owner == "" || c.Nonce == "" || c.Expires.IsZero() || signedInBy[c.Via] == "" {
		return Claims{}, ErrInvalid
	}
	if !now.Before(c.Expires) {
		return c, ErrExpired
	}
	return c, nil
}

// SignInToken issues a sign-in token for owner, to be sent by via (ViaEmail,
// ViaSlackDM, ViaConsole), valid LinkLifetime from now.
func (k Keys) SignInToken(owner, via string, now time.Time) string {
	return sign(k.signin, Claims{Kind: kindSignIn, Holder: signed.Holder{Owner: owner, Expires: now.Add(LinkLifetime), Nonce: nonce(), Via: via}})
}

// CheckSignIn verifies a sign-in token without using it (the GET that shows the button).
func (k Keys) CheckSignIn(token string, now time.Time) (Claims, error) {
	return verify(k.signin, kindSignIn, token, now)
}

// UseSignIn verifies a sign-in token and marks it used, once: a second use is ErrUsed.
func (k Keys) UseSignIn(ctx context.Context, m Markers, token string, now time.Time) (Claims, error) {
	c, err := k.CheckSignIn(token, now)
	if err != nil {
		return c, err
	}
	first, err := m.UseSignIn(ctx, c.Nonce, c.Expires)
	if err != nil {
		return c, fmt.Errorf("mark sign-in link used: %w", err)
	}
	if !first {
		return c, ErrUsed
	}
	return c, nil
}

// SignInFormToken is the hidden field of the "Sign in as …" form: it binds the POST to the page.
func (k Keys) SignInFormToken(token string) string {
	return signed.MAC(k.form, "signin:"+token)
}

// CheckSignInFormToken reports, in constant time, whether v is SignInFormToken(token).
func (k Keys) CheckSignInFormToken(token, v string) bool {
	return signed.CheckMAC(k.form, "signin:"+token, v)
}

// Session is a signed-in owner.
type Session struct {
	Owner   string
	Expires time.Time
	// Via is where the sign-in link that opened the session was sent.
	Via   string
	id    string // the session id (the claims' nonce), never logged
	value string // the cookie value, which form tokens are bound to
}

// SignedInBy says how the session was signed in, as the audit trail shows
// it: "email link", "Slack DM link", "link printed by make local".
func (s Session) SignedInBy() string { return signedInBy[s.Via] }

// Start records a new session of owner, signed in by a link sent by via, in
// st and returns the cookie that signs the browser in for SessionLifetime.
// It is HttpOnly, SameSite=Lax, and Secure unless the request came to a
// loopback host (the local stack serves plain http on 127.0.0.1).
func (k Keys) Start(ctx context.Context, st Sessions, r *http.Request, owner, via string, now time.Time) (*http.Cookie, error) {
	if signedInBy[via] == "" {
		return nil, fmt.Errorf("start session of %s: sign-in by %q is not one Prickle sends", owner, via)
	}
	c := Claims{Kind: kindSession, Holder: signed.Holder{Owner: owner, Expires: now.Add(SessionLifetime), Nonce: nonce(), Via: via}}
	if err := st.StartSession(ctx, owner, c.Nonce, c.Expires); err != nil {
		return nil, fmt.Errorf("start session of %s: %w", owner, err)
	}
	return &http.Cookie{
		Name: CookieName, Value: sign(k.session, c), Path: "/", Expires: c.Expires,
		MaxAge: int(SessionLifetime / time.Second), HttpOnly: true, Secure: !Loopback(r), SameSite: http.SameSiteLaxMode,
	}, nil
}

// End forgets the session s in st and returns the cookie that signs the browser out.
func End(ctx context.Context, st Sessions, r *http.Request, s Session) (*http.Cookie, error) {
	if err := st.EndSession(ctx, s.Owner, s.id); err != nil {
		return nil, fmt.Errorf("end session of %s: %w", s.Owner, err)
	}
	return Cleared(r), nil
}

// EndAll forgets every session of s's owner in st, this one included, and
// returns the cookie that signs this browser out.
func EndAll(ctx context.Context, st Sessions, r *http.Request, s Session) (*http.Cookie, error) {
	if err := st.EndOwnerSessions(ctx, s.Owner); err != nil {
		return nil, fmt.Errorf("end every session of %s: %w", s.Owner, err)
	}
	return Cleared(r), nil
}

// Cleared is the cookie that removes the session cookie from the browser.
func Cleared(r *http.Request) *http.Cookie {
	return &http.Cookie{Name: CookieName, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, Secure: !Loopback(r), SameSite: http.SameSiteLaxMode}
}

// From reads the session of a request: ok is false without a valid,
// unexpired cookie whose session st still records. err is st's failure
// (ok is false then too: a session that cannot be checked opens nothing).
func (k Keys) From(ctx context.Context, st Sessions, r *http.Request, now time.Time) (s Session, ok bool, err error) {
	ck, err := r.Cookie(CookieName)
	if err != nil {
		return Session{}, false, nil
	}
	c, err := verify(k.session, kindSession, ck.Value, now)
	if err != nil {
		return Session{}, false, nil
	}
	active, err := st.SessionActive(ctx, c.Owner, c.Nonce)
	if err != nil {
		return Session{}, false, fmt.Errorf("check session of %s: %w", c.Owner, err)
	}
	if !active {
		return Session{}, false, nil
	}
	return Session{Owner: c.Owner, Expires: c.Expires, Via: c.Via, id: c.Nonce, value: ck.Value}, true, nil
}

// FormToken is the hidden CSRF field of a signed-in page's forms, bound to the session.
func (k Keys) FormToken(s Session) string {
	return signed.MAC(k.form, "session:"+s.value)
}

// CheckFormToken reports, in constant time, whether v is FormToken(s).
func (k Keys) CheckFormToken(s Session, v string) bool {
	return s.value != "" && signed.CheckMAC(k.form, "session:"+s.value, v)
}

// Loopback reports whether the request's host is a loopback address or localhost.
func Loopback(r *http.Request) bool {
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
