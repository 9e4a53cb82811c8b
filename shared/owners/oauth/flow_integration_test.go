//go:build integration

package oauth_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/auth/link"
	"github.com/useprickle/prickle/shared/auth/oauthresource"
	"github.com/useprickle/prickle/shared/auth/session"
	"github.com/useprickle/prickle/shared/aws/store"
	"github.com/useprickle/prickle/shared/aws/store/storetest"
	"github.com/useprickle/prickle/shared/domain/event"
	"github.com/useprickle/prickle/shared/jobs/runnerapi"
	"github.com/useprickle/prickle/shared/owners/oauth"
	"github.com/useprickle/prickle/shared/owners/web"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/admin"
	"github.com/useprickle/prickle/shared/team/mint"
)

// noEvents drops the events the model spend would publish.
type noEvents struct{}

func (noEvents) Publish(context.Context, ...event.Event) error { return nil }

const redirectURI = "http://127.0.0.1:9/callback"

// stack is the authorization server over the emulator, served on loopback,
// with alice signed in (her session cookie) and two agents of hers.
type stack struct {
	t      *testing.T
	srv    *httptest.Server
	st     *store.Store
	cookie *http.Cookie
	http   *http.Client
	keys   session.Keys
	// clock is the authorization server's: tests move it past intervals and lifetimes.
	clock *offsetClock
}

// offsetClock is the real clock moved forward by what tests advance.
type offsetClock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *offsetClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

func (c *offsetClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
}

func newStack(t *testing.T) *stack {
	t.Helper()
	ctx := context.Background()
	st := storetest.New(t).Store
	adm := admin.New(st)
	if err := adm.CreateProject(ctx, team.Project{Slug: "website-v2", Name: "Website v2", StepDeadline: time.Hour}); err != nil {
		t.Fatal(err)
	}
	for _, o := range []string{"alice", "bob"} {
		if err := adm.CreateOwner(ctx, team.Owner{Name: o, Email: o + "@example.com"}); err != nil {
			t.Fatal(err)
		}
	}
	for _, a := range []string{"alice/writer", "bob/reviewer"} {
		if err := adm.CreateAgent(ctx, a, []string{"website-v2"}); err != nil {
			t.Fatal(err)
		}
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	keys, err := session.NewKeys(key)
	if err != nil {
		t.Fatal(err)
	}
	// The authorization server and, for every other path, the pages (sign
	// out everywhere), as the gateway routes them, on one origin.
	h := http.NewServeMux()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	clock := &offsetClock{}
	s, err := oauth.New(oauth.Config{BaseURL: srv.URL, Grants: st, Directory: st, Keys: keys, Documents: oauth.NewDocuments(true),
		Device: &oauth.DeviceConfig{Store: st, Mint: mint.New(st)}, Log: log, Now: clock.now})
	if err != nil {
		t.Fatal(err)
	}
	h.Handle("/oauth/", s)
	// The runner API, where a joined runner claims its agent's wake-ups.
	h.Handle("/runner/", runnerapi.New(runnerapi.Config{Tokens: st, Queue: st, Runs: adm, Spend: team.NewModelSpend(st, noEvents{}, log),
		Settings: team.New(st), Log: log, Poll: 50 * time.Millisecond}))
	h.Handle("/.well-known/", s)
	h.Handle("/", web.New(web.Config{Store: st, Signer: link.Signer{Key: key}, BaseURL: srv.URL, Log: log}))
	ck, err := keys.Start(ctx, st, httptest.NewRequest(http.MethodGet, srv.URL, nil), "alice", session.ViaEmail, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return &stack{t: t, srv: srv, st: st, cookie: ck, keys: keys, clock: clock,
		http: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (s *stack) do(req *http.Request) (*http.Response, string) {
	s.t.Helper()
	resp, err := s.http.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func (s *stack) register(redirects ...string) string {
	s.t.Helper()
	body, _ := json.Marshal(map[string]any{"redirect_uris": redirects, "client_name": "Test connector", "token_endpoint_auth_method": "none"})
	req, _ := http.NewRequest(http.MethodPost, s.srv.URL+"/oauth/register", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, text := s.do(req)
	var out struct {
		ClientID string `json:"client_id"`
	}
	if resp.StatusCode != http.StatusCreated || json.Unmarshal([]byte(text), &out) != nil || out.ClientID == "" {
		s.t.Fatalf("register: HTTP %d %s", resp.StatusCode, text)
	}
	return out.ClientID
}

func pkce() (verifier, challenge string) {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	verifier = base64.RawURLEncoding.EncodeToString(b)
	sum := sha256.Sum256([]byte(verifier))
	return verifier, base64.RawURLEncoding.EncodeToString(sum[:])
}

func (s *stack) authorizeURL(client, redirect, challenge, method string) string {
	q := url.Values{"response_type": {"code"}, "client_id": {client}, "redirect_uri": {redirect}, "scope": {"prickle"},
		"state": {"state-1234567"}, "code_challenge": {challenge}, "code_challenge_method": {method}, "resource": {s.srv.URL + "/mcp"}}
	return s.srv.URL + "/oauth/authorize?" + q.Encode()
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// consent runs authorize and the owner's consent as alice, choosing agent,
// and returns the redirect the browser would follow.
func (s *stack) consent(client, challenge string, form url.Values) *url.URL {
	s.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.authorizeURL(client, redirectURI, challenge, "S256"), nil)
	resp, text := s.do(req)
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "consent/") {
		s.t.Fatalf("authorize: HTTP %d %s %s", resp.StatusCode, resp.Header.Get("Location"), text)
	}
	page := s.srv.URL + "/oauth/" + resp.Header.Get("Location")
	// Nobody signed in: a sign-in form that comes back to this very page.
	req, _ = http.NewRequest(http.MethodGet, page, nil)
	if out, text := s.do(req); out.StatusCode != http.StatusOK || !strings.Contains(text, `name="next" value="oauth/`+resp.Header.Get("Location")+`"`) {
		s.t.Fatalf("consent page signed out: HTTP %d %s", out.StatusCode, text)
	}
	req, _ = http.NewRequest(http.MethodGet, page, nil)
	req.AddCookie(s.cookie)
	resp, text = s.do(req)
	m := csrfField.FindStringSubmatch(text)
	if resp.StatusCode != http.StatusOK || m == nil || !strings.Contains(text, "alice/writer") || strings.Contains(text, "bob/reviewer") || !strings.Contains(text, "127.0.0.1:9") {
		s.t.Fatalf("consent page: HTTP %d %s", resp.StatusCode, text)
	}
	form.Set("csrf", m[1])
	req, _ = http.NewRequest(http.MethodPost, page, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", s.srv.URL)
	req.AddCookie(s.cookie)
	resp, text = s.do(req)
	loc, err := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode/100 != 3 || err != nil || !strings.HasPrefix(loc.String(), redirectURI) {
		s.t.Fatalf("consent decision: HTTP %d %s %s", resp.StatusCode, resp.Header.Get("Location"), text)
	}
	return loc
}

type tokens struct {
	Access  string `json:"access_token"`
	Refresh string `json:"refresh_token"`
	Type    string `json:"token_type"`
	Error   string `json:"error"`
}

func (s *stack) token(form url.Values) (int, tokens) {
	s.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.srv.URL+"/oauth/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, text := s.do(req)
	var out tokens
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		s.t.Fatalf("token: HTTP %d %s", resp.StatusCode, text)
	}
	return resp.StatusCode, out
}

func (s *stack) exchange(client, code, verifier string) (int, tokens) {
	return s.token(url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirectURI},
		"client_id": {client}, "code_verifier": {verifier}, "resource": {s.srv.URL + "/mcp"}})
}

// agentOf is who /mcp says the token acts as (an error when it refuses it).
func (s *stack) agentOf(access string) (string, error) {
	c, err := oauthresource.New(s.srv.URL, s.st).Authenticate(context.Background(), access, time.Now())
	return c.Agent, err
}

// TestAuthorizationCodeFlow: registration, authorize, consent as alice,
// token exchange with PKCE, and the token acts as the agent alice chose, for
// this resource only; a refresh rotates both tokens.
func TestAuthorizationCodeFlow(t *testing.T) {
	s := newStack(t)
	client := s.register(redirectURI)
	verifier, challenge := pkce()
	loc := s.consent(client, challenge, url.Values{"decision": {"allow"}, "agent": {"alice/writer"}})
	if loc.Query().Get("state") != "state-1234567" || loc.Query().Get("code") == "" {
		t.Fatalf("redirect %s: want the code and the client's state", loc)
	}
	status, tok := s.exchange(client, loc.Query().Get("code"), verifier)
	if status != http.StatusOK || !strings.HasPrefix(tok.Access, oauthresource.TokenPrefix) || tok.Refresh == "" || !strings.EqualFold(tok.Type, "bearer") {
		t.Fatalf("exchange: HTTP %d %+v", status, tok)
	}
	if agent, err := s.agentOf(tok.Access); err != nil || agent != "alice/writer" {
		t.Fatalf("access token acts as %q, %v; want alice/writer", agent, err)
	}
	stored, err := s.st.TokenByHash(context.Background(), identity.Hash(tok.Access))
	if err != nil || stored.Audience != s.srv.URL+"/mcp" || stored.Client != client || !stored.ExpiresAt.Before(time.Now().Add(oauth.AccessTokenLifespan+time.Minute)) {
		t.Errorf("stored access token = %+v, %v", stored, err)
	}
	// Wrong audience: the same token presented to another resource.
	if _, err := oauthresource.New("https://other.example", s.st).Authenticate(context.Background(), tok.Access, time.Now()); !errors.Is(err, identity.ErrUnknownToken) {
		t.Errorf("token at another resource: err = %v, want ErrUnknownToken", err)
	}
	status, next := s.token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.Refresh}, "client_id": {client}})
	if status != http.StatusOK || next.Access == tok.Access || next.Refresh == tok.Refresh || next.Refresh == "" {
		t.Fatalf("refresh: HTTP %d %+v", status, next)
	}
	if agent, err := s.agentOf(next.Access); err != nil || agent != "alice/writer" {
		t.Errorf("refreshed token acts as %q, %v", agent, err)
	}
}

// TestNewAgentAtConsent: alice creates alice/claude-web with a project at
// consent, and the token acts as it.
func TestNewAgentAtConsent(t *testing.T) {
	s := newStack(t)
	client := s.register(redirectURI)
	verifier, challenge := pkce()
	loc := s.consent(client, challenge, url.Values{"decision": {"allow"}, "agent": {"new"}, "new_agent": {"claude-web"}, "project": {"website-v2"}})
	_, tok := s.exchange(client, loc.Query().Get("code"), verifier)
	if agent, err := s.agentOf(tok.Access); err != nil || agent != "alice/claude-web" {
		t.Fatalf("token acts as %q, %v; want alice/claude-web", agent, err)
	}
	a, err := s.st.Agent(context.Background(), "alice/claude-web")
	if err != nil || a.Owner != "alice" || strings.Join(a.Projects, ",") != "website-v2" {
		t.Errorf("new agent = %+v, %v", a, err)
	}
}

// TestAttacks: each attack refused.
func TestAttacks(t *testing.T) {
	s := newStack(t)
	client := s.register(redirectURI)

	t.Run("reused code is refused and its tokens revoked", func(t *testing.T) {
		verifier, challenge := pkce()
		loc := s.consent(client, challenge, url.Values{"decision": {"allow"}, "agent": {"alice/writer"}})
		_, tok := s.exchange(client, loc.Query().Get("code"), verifier)
		status, again := s.exchange(client, loc.Query().Get("code"), verifier)
		if status != http.StatusBadRequest || again.Error != "invalid_grant" {
			t.Fatalf("second exchange: HTTP %d %+v, want 400 invalid_grant", status, again)
		}
		if _, err := s.agentOf(tok.Access); !errors.Is(err, identity.ErrUnknownToken) {
			t.Errorf("the first exchange's token after the replay: err = %v, want revoked", err)
		}
		if status, _ := s.token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.Refresh}, "client_id": {client}}); status != http.StatusBadRequest {
			t.Errorf("the first exchange's refresh token after the replay: HTTP %d, want 400", status)
		}
	})
	t.Run("wrong PKCE verifier", func(t *testing.T) {
		_, challenge := pkce()
		other, _ := pkce()
		loc := s.consent(client, challenge, url.Values{"decision": {"allow"}, "agent": {"alice/writer"}})
		if status, tok := s.exchange(client, loc.Query().Get("code"), other); status != http.StatusBadRequest || tok.Access != "" {
			t.Errorf("exchange with another verifier: HTTP %d %+v, want 400", status, tok)
		}
	})
	t.Run("plain PKCE and no PKCE are refused", func(t *testing.T) {
		verifier, _ := pkce()
		for _, u := range []string{s.authorizeURL(client, redirectURI, verifier, "plain"), s.authorizeURL(client, redirectURI, "", "")} {
			req, _ := http.NewRequest(http.MethodGet, u, nil)
			resp, _ := s.do(req)
			loc, _ := url.Parse(resp.Header.Get("Location"))
			if resp.StatusCode/100 != 3 || loc.Query().Get("error") != "invalid_request" {
				t.Errorf("authorize %s: HTTP %d %s, want invalid_request back to the client", u, resp.StatusCode, loc)
			}
		}
	})
	t.Run("unregistered redirect URI is refused before any redirect", func(t *testing.T) {
		_, challenge := pkce()
		for _, r := range []string{"https://evil.example/cb", redirectURI + "/more", "http://127.0.0.1:9/callback?x=1"} {
			req, _ := http.NewRequest(http.MethodGet, s.authorizeURL(client, r, challenge, "S256"), nil)
			resp, text := s.do(req)
			if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" || !strings.Contains(text, "Not connected") {
				t.Errorf("redirect %s: HTTP %d Location %q", r, resp.StatusCode, resp.Header.Get("Location"))
			}
		}
	})
	t.Run("refresh token reuse revokes the family", func(t *testing.T) {
		verifier, challenge := pkce()
		loc := s.consent(client, challenge, url.Values{"decision": {"allow"}, "agent": {"alice/writer"}})
		_, first := s.exchange(client, loc.Query().Get("code"), verifier)
		_, second := s.token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {first.Refresh}, "client_id": {client}})
		if second.Refresh == "" {
			t.Fatal("no rotated refresh token")
		}
		status, replay := s.token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {first.Refresh}, "client_id": {client}})
		if status != http.StatusBadRequest || replay.Error != "invalid_grant" {
			t.Fatalf("replayed refresh token: HTTP %d %+v", status, replay)
		}
		if status, _ := s.token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {second.Refresh}, "client_id": {client}}); status != http.StatusBadRequest {
			t.Errorf("the rotated refresh token after the replay: HTTP %d, want 400", status)
		}
		if _, err := s.agentOf(second.Access); !errors.Is(err, identity.ErrUnknownToken) {
			t.Errorf("the rotated access token after the replay: err = %v, want revoked", err)
		}
	})
	t.Run("metadata document on a private address is refused", func(t *testing.T) {
		_, challenge := pkce()
		for _, id := range []string{"https://10.0.0.8/client.json", "https://169.254.169.254/latest/meta-data", "https://[::1]/c.json", "https://localhost/c.json", "http://example.com/c.json"} {
			req, _ := http.NewRequest(http.MethodGet, s.authorizeURL(id, redirectURI, challenge, "S256"), nil)
			resp, _ := s.do(req)
			if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" {
				t.Errorf("client_id %s: HTTP %d Location %q, want 400 and no redirect", id, resp.StatusCode, resp.Header.Get("Location"))
			}
		}
	})
	t.Run("consent without the form token, cross-site or signed out decides nothing", func(t *testing.T) {
		_, challenge := pkce()
		req, _ := http.NewRequest(http.MethodGet, s.authorizeURL(client, redirectURI, challenge, "S256"), nil)
		resp, _ := s.do(req)
		page := s.srv.URL + "/oauth/" + resp.Header.Get("Location")
		req, _ = http.NewRequest(http.MethodGet, page, nil)
		req.AddCookie(s.cookie)
		_, text := s.do(req)
		csrf := csrfField.FindStringSubmatch(text)[1]
		for _, c := range []struct {
			name, csrf, origin string
			cookie             bool
		}{
			{"no form token", "", s.srv.URL, true},
			{"another session's token", "AAAA", s.srv.URL, true},
			{"from another origin", csrf, "https://evil.example", true},
			{"cross-site with Origin null", csrf, "null", true},
			{"signed out", csrf, s.srv.URL, false},
		} {
			form := url.Values{"decision": {"allow"}, "agent": {"alice/writer"}, "csrf": {c.csrf}}
			req, _ := http.NewRequest(http.MethodPost, page, strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Origin", c.origin)
			if c.origin == "null" {
				req.Header.Set("Sec-Fetch-Site", "cross-site")
			}
			if c.cookie {
				req.AddCookie(s.cookie)
			}
			resp, _ := s.do(req)
			if resp.StatusCode != http.StatusForbidden || resp.Header.Get("Location") != "" {
				t.Errorf("%s: HTTP %d Location %q, want 403", c.name, resp.StatusCode, resp.Header.Get("Location"))
			}
		}
		form := url.Values{"decision": {"allow"}, "agent": {"bob/reviewer"}, "csrf": {csrf}}
		req, _ = http.NewRequest(http.MethodPost, page, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.AddCookie(s.cookie)
		resp, text = s.do(req)
		if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" || !strings.Contains(text, "Choose one of your agents") {
			t.Errorf("choosing bob's agent: HTTP %d %s %s", resp.StatusCode, resp.Header.Get("Location"), text)
		}
	})
	t.Run("denied consent returns access_denied with the state", func(t *testing.T) {
		_, challenge := pkce()
		loc := s.consent(client, challenge, url.Values{"decision": {"deny"}})
		if loc.Query().Get("error") != "access_denied" || loc.Query().Get("state") != "state-1234567" || loc.Query().Get("code") != "" {
			t.Errorf("deny redirect %s", loc)
		}
	})
	t.Run("registration is bounded", func(t *testing.T) {
		for _, body := range []string{`{"redirect_uris":["javascript:alert(1)"]}`, `{"redirect_uris":["http://evil.example/cb"]}`,
			`{"redirect_uris":[]}`, `{"redirect_uris":["https://a.example/cb"],"token_endpoint_auth_method":"client_secret_basic"}`, `not json`} {
			req, _ := http.NewRequest(http.MethodPost, s.srv.URL+"/oauth/register", strings.NewReader(body))
			resp, text := s.do(req)
			if resp.StatusCode != http.StatusBadRequest {
				t.Errorf("register %s: HTTP %d %s, want 400", body, resp.StatusCode, text)
			}
		}
	})
}

// TestDisconnect: the owner disconnects a client on her page and its
// tokens end at once.
func TestDisconnect(t *testing.T) {
	s := newStack(t)
	client := s.register(redirectURI)
	verifier, challenge := pkce()
	loc := s.consent(client, challenge, url.Values{"decision": {"allow"}, "agent": {"alice/writer"}})
	_, tok := s.exchange(client, loc.Query().Get("code"), verifier)
	req, _ := http.NewRequest(http.MethodGet, s.srv.URL+"/oauth/clients", nil)
	req.AddCookie(s.cookie)
	resp, text := s.do(req)
	action := regexp.MustCompile(`action="\.\./oauth/clients/([^/"]+)/revoke"`).FindStringSubmatch(text)
	if resp.StatusCode != http.StatusOK || action == nil || !strings.Contains(text, "Test connector") {
		t.Fatalf("clients page: HTTP %d %s", resp.StatusCode, text)
	}
	form := url.Values{"csrf": {csrfField.FindStringSubmatch(text)[1]}}
	req, _ = http.NewRequest(http.MethodPost, s.srv.URL+"/oauth/clients/"+action[1]+"/revoke", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(s.cookie)
	if resp, text := s.do(req); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("disconnect: HTTP %d %s", resp.StatusCode, text)
	}
	if _, err := s.agentOf(tok.Access); !errors.Is(err, identity.ErrUnknownToken) {
		t.Errorf("access token after disconnecting: err = %v, want revoked", err)
	}
	if status, _ := s.token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.Refresh}, "client_id": {client}}); status != http.StatusBadRequest {
		t.Errorf("refresh after disconnecting: HTTP %d, want 400", status)
	}
}

// TestMetadataDocumentClient: a client whose client_id is the URL of its
// metadata document (served on loopback, allowed by the local-dev setting)
// connects without registering, and the consent page says how it is known.
func TestMetadataDocumentClient(t *testing.T) {
	s := newStack(t)
	var docURL string
	doc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"client_id": docURL, "client_name": "Doc client", "redirect_uris": []string{redirectURI},
			"token_endpoint_auth_method": "none", "grant_types": []string{"authorization_code", "refresh_token"}})
	}))
	t.Cleanup(doc.Close)
	docURL = doc.URL + "/client.json"
	verifier, challenge := pkce()
	req, _ := http.NewRequest(http.MethodGet, s.authorizeURL(docURL, redirectURI, challenge, "S256"), nil)
	resp, text := s.do(req)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("authorize: HTTP %d %s", resp.StatusCode, text)
	}
	req, _ = http.NewRequest(http.MethodGet, s.srv.URL+"/oauth/"+resp.Header.Get("Location"), nil)
	req.AddCookie(s.cookie)
	if _, text := s.do(req); !strings.Contains(text, "client ID metadata document") || !strings.Contains(text, "Doc client") {
		t.Fatalf("consent page does not say how the client is known: %s", text)
	}
	loc := s.consent(docURL, challenge, url.Values{"decision": {"allow"}, "agent": {"alice/writer"}})
	status, tok := s.exchange(docURL, loc.Query().Get("code"), verifier)
	if status != http.StatusOK {
		t.Fatalf("exchange: HTTP %d %+v", status, tok)
	}
	if agent, err := s.agentOf(tok.Access); err != nil || agent != "alice/writer" {
		t.Errorf("token acts as %q, %v", agent, err)
	}
}

// TestEveryResponseIsNosniff: every answer of the authorization server, its
// pages, JSON documents, redirects and errors alike, carries
// X-Content-Type-Options: nosniff, as every other page of Prickle does, so
// no browser reads a text or JSON answer as something else.
func TestEveryResponseIsNosniff(t *testing.T) {
	s := newStack(t)
	client := s.register(redirectURI)
	_, challenge := pkce()
	form := func(v url.Values) io.Reader { return strings.NewReader(v.Encode()) }
	for _, tc := range []struct {
		name, method, path string
		body               io.Reader
		signedIn           bool
		status             int
	}{
		{"authorization server metadata", http.MethodGet, "/.well-known/oauth-authorization-server", nil, false, http.StatusOK},
		{"resource metadata", http.MethodGet, oauthresource.MetadataPath, nil, false, http.StatusOK},
		{"registration refused", http.MethodPost, "/oauth/register", strings.NewReader(`{"redirect_uris":["javascript:x"]}`), false, http.StatusBadRequest},
		{"registration preflight", http.MethodOptions, "/oauth/register", nil, false, http.StatusNoContent},
		{"authorize to consent", http.MethodGet, strings.TrimPrefix(s.authorizeURL(client, redirectURI, challenge, "S256"), s.srv.URL), nil, false, http.StatusSeeOther},
		{"authorize error page", http.MethodGet, "/oauth/authorize?client_id=nobody&response_type=code", nil, false, http.StatusBadRequest},
		{"consent page of no authorization", http.MethodGet, "/oauth/consent/unknown", nil, true, http.StatusGone},
		{"token error", http.MethodPost, "/oauth/token", form(url.Values{"grant_type": {"authorization_code"}, "code": {"nope"}}), false, http.StatusBadRequest},
		{"clients page", http.MethodGet, "/oauth/clients", nil, true, http.StatusOK},
		{"clients page, signed out", http.MethodGet, "/oauth/clients", nil, false, http.StatusSeeOther},
		{"unknown path", http.MethodGet, "/oauth/nothing-here", nil, false, http.StatusNotFound},
	} {
		req, _ := http.NewRequest(tc.method, s.srv.URL+tc.path, tc.body)
		if tc.method == http.MethodPost {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			if tc.path == "/oauth/register" {
				req.Header.Set("Content-Type", "application/json")
			}
		}
		if tc.signedIn {
			req.AddCookie(s.cookie)
		}
		resp, text := s.do(req)
		if resp.StatusCode != tc.status {
			t.Errorf("%s: HTTP %d, want %d: %.200s", tc.name, resp.StatusCode, tc.status, text)
		}
		if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s (HTTP %d, %s): X-Content-Type-Options %q, want nosniff", tc.name, resp.StatusCode, resp.Header.Get("Content-Type"), got)
		}
	}
}

// TestSignOutEverywhereEndsConnections: whoever held one of alice's sessions
// (a stranger who signed in as her, say) connected clients as alice/writer;
// when alice signs out everywhere, their grants end with her sessions: a
// refresh is refused, the access tokens are refused on /mcp, and the page
// says which applications it disconnected.
func TestSignOutEverywhereEndsConnections(t *testing.T) {
	s := newStack(t)
	type connected struct {
		client string
		tok    tokens
	}
	var held []connected
	for range 2 {
		client := s.register(redirectURI)
		verifier, challenge := pkce()
		loc := s.consent(client, challenge, url.Values{"decision": {"allow"}, "agent": {"alice/writer"}})
		_, tok := s.exchange(client, loc.Query().Get("code"), verifier)
		status, next := s.token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.Refresh}, "client_id": {client}})
		if status != http.StatusOK || next.Refresh == "" {
			t.Fatalf("refresh before signing out: HTTP %d (error %q)", status, next.Error)
		}
		held = append(held, connected{client, next})
	}
	req, _ := http.NewRequest(http.MethodGet, s.srv.URL+"/", nil)
	req.AddCookie(s.cookie)
	_, home := s.do(req)
	csrf := csrfField.FindStringSubmatch(home)
	if csrf == nil {
		t.Fatalf("no sign-out form on the home page: %s", home)
	}
	form := url.Values{"csrf": {csrf[1]}}
	req, _ = http.NewRequest(http.MethodPost, s.srv.URL+"/signout-everywhere", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", s.srv.URL)
	req.AddCookie(s.cookie)
	resp, text := s.do(req)
	if resp.StatusCode != http.StatusOK || !strings.Contains(text, "Signed out everywhere") || strings.Count(text, "Test connector") != 2 || !strings.Contains(text, "alice/writer") {
		t.Errorf("sign out everywhere: HTTP %d; want the page naming both disconnected applications:\n%s", resp.StatusCode, text)
	}
	for i, c := range held {
		if status, again := s.token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {c.tok.Refresh}, "client_id": {c.client}}); status != http.StatusBadRequest || again.Access != "" {
			t.Errorf("client %d: refresh after alice signed out everywhere: HTTP %d (error %q), want 400", i+1, status, again.Error)
		}
		if agent, err := s.agentOf(c.tok.Access); !errors.Is(err, identity.ErrUnknownToken) {
			t.Errorf("client %d: access token after alice signed out everywhere acts as %q (%v), want refused", i+1, agent, err)
		}
	}
	grants, err := s.st.OwnerOAuthConnections(context.Background(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range grants {
		if !g.Revoked {
			t.Errorf("grant of %s as %s is still live", g.ClientName, g.Agent)
		}
	}
}
