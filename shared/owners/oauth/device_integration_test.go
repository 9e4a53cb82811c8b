//go:build integration

package oauth_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/auth/session"
	"github.com/useprickle/prickle/shared/owners/oauth"
)

type deviceAnswer struct {
	DeviceCode string `json:"device_code"`
	UserCode   string `json:"user_code"`
	URI        string `json:"verification_uri"`
	Complete   string `json:"verification_uri_complete"`
	ExpiresIn  int    `json:"expires_in"`
	Interval   int    `json:"interval"`
	Access     string `json:"access_token"`
	Type       string `json:"token_type"`
	Agent      string `json:"agent"`
	RunnerID   string `json:"runner_id"`
	Error      string `json:"error"`
}

func (s *stack) post(path string, form url.Values) (int, deviceAnswer) {
	s.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, text := s.do(req)
	var a deviceAnswer
	if err := json.Unmarshal([]byte(text), &a); err != nil {
		s.t.Fatalf("POST %s: HTTP %d %s", path, resp.StatusCode, text)
	}
	return resp.StatusCode, a
}

// deviceCode is what prickle-runner login asks for first.
func (s *stack) deviceCode(name string) deviceAnswer {
	s.t.Helper()
	status, a := s.post("/oauth/device_authorization", url.Values{"client_id": {oauth.RunnerClientID}, "name": {name}})
	if status != http.StatusOK || a.DeviceCode == "" || !regexp.MustCompile(`^[B-Z]{4}-[B-Z]{4}$`).MatchString(a.UserCode) ||
		a.Complete != s.srv.URL+"/oauth/device?code="+a.UserCode || a.ExpiresIn != 600 || a.Interval != 5 {
		s.t.Fatalf("device authorization: HTTP %d %+v", status, a)
	}
	return a
}

// poll is one poll of the token endpoint, an interval after the last.
func (s *stack) poll(deviceCode string) (int, deviceAnswer) {
	s.t.Helper()
	s.clock.advance(oauth.DeviceInterval)
	return s.post("/oauth/token", url.Values{"grant_type": {oauth.DeviceGrantType}, "device_code": {deviceCode}, "client_id": {oauth.RunnerClientID}})
}

func (s *stack) wantPoll(deviceCode string, status int, errCode string) deviceAnswer {
	s.t.Helper()
	got, a := s.poll(deviceCode)
	if got != status || a.Error != errCode {
		s.t.Fatalf("poll: HTTP %d %q, want HTTP %d %q (%+v)", got, a.Error, status, errCode, a)
	}
	return a
}

func (s *stack) signIn(owner string) *http.Cookie {
	s.t.Helper()
	ck, err := s.keys.Start(context.Background(), s.st, httptest.NewRequest(http.MethodGet, s.srv.URL, nil), owner, session.ViaEmail, time.Now())
	if err != nil {
		s.t.Fatal(err)
	}
	return ck
}

// devicePage opens the runner's link as the owner of cookie (nil: nobody).
func (s *stack) devicePage(cookie *http.Cookie, link string) (*http.Response, string, string) {
	s.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, link, nil)
	if cookie != nil {
		req.AddCookie(cookie)
	}
	resp, text := s.do(req)
	csrf := ""
	if m := csrfField.FindStringSubmatch(text); m != nil {
		csrf = m[1]
	}
	return resp, text, csrf
}

func (s *stack) decideDevice(cookie *http.Cookie, origin string, form url.Values) (int, string) {
	s.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.srv.URL+"/oauth/device", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	if cookie != nil {
		req.AddCookie(cookie)
	}
	resp, text := s.do(req)
	return resp.StatusCode, text
}

// allow is alice allowing the code for agent on the device page.
func (s *stack) allow(code, agent string) (int, string) {
	s.t.Helper()
	resp, text, csrf := s.devicePage(s.cookie, s.srv.URL+"/oauth/device?code="+code)
	if resp.StatusCode != http.StatusOK || csrf == "" {
		s.t.Fatalf("device page: HTTP %d %s", resp.StatusCode, text)
	}
	return s.decideDevice(s.cookie, s.srv.URL, url.Values{"csrf": {csrf}, "code": {code}, "agent": {agent}, "decision": {"allow"}})
}

// claim is a runner's claim with token: the HTTP status.
func (s *stack) claim(token string) int {
	s.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.srv.URL+"/runner/claim", strings.NewReader(`{"wait_seconds": 0, "max": 1}`))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, _ := s.do(req)
	return resp.StatusCode
}

// TestDeviceGrantJoinsARunner: prickle-runner login's whole flow. The page
// shows the code and the runner's name and only POST decides; the runner
// polls (pending until alice allows), receives a token of the agent alice
// chose, which claims wake-ups; the owners page lists the runner, and its
// Revoke ends the token at once (the next claim is 401).
func TestDeviceGrantJoinsARunner(t *testing.T) {
	s := newStack(t)
	req, _ := http.NewRequest(http.MethodGet, s.srv.URL+"/.well-known/oauth-authorization-server", nil)
	if _, text := s.do(req); !strings.Contains(text, `"device_authorization_endpoint":"`+s.srv.URL+`/oauth/device_authorization"`) || !strings.Contains(text, oauth.DeviceGrantType) {
		t.Fatalf("metadata: %s", text)
	}
	dev := s.deviceCode("alice-laptop")
	s.wantPoll(dev.DeviceCode, http.StatusBadRequest, "authorization_pending")

	// Nobody signed in: a sign-in form that comes back to this very page.
	resp, text, _ := s.devicePage(nil, dev.Complete)
	if resp.StatusCode != http.StatusOK || !strings.Contains(text, `name="next" value="oauth/device?code=`+dev.UserCode+`"`) ||
		resp.Header.Get("X-Frame-Options") != "DENY" || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("device page signed out: HTTP %d %v %s", resp.StatusCode, resp.Header, text)
	}
	// Signed in: the code, the runner's name, alice's agents only; GET decides nothing.
	resp, text, _ = s.devicePage(s.cookie, dev.Complete)
	if resp.StatusCode != http.StatusOK || !strings.Contains(text, dev.UserCode) || !strings.Contains(text, "alice-laptop") ||
		!strings.Contains(text, "alice/writer") || strings.Contains(text, "bob/reviewer") {
		t.Fatalf("device page: HTTP %d %s", resp.StatusCode, text)
	}
	s.wantPoll(dev.DeviceCode, http.StatusBadRequest, "authorization_pending")

	if status, text := s.allow(dev.UserCode, "alice/writer"); status != http.StatusOK || !strings.Contains(text, "Runner joined") {
		t.Fatalf("allow: HTTP %d %s", status, text)
	}
	got := s.wantPoll(dev.DeviceCode, http.StatusOK, "")
	if got.Agent != "alice/writer" || got.Type != "Bearer" || !strings.HasPrefix(got.RunnerID, "rnr_") || got.Access == "" {
		t.Fatalf("token answer: %+v", got)
	}
	tok, err := s.st.TokenByHash(context.Background(), identity.Hash(got.Access))
	if err != nil || tok.Kind != identity.KindAgent || tok.Agent != "alice/writer" {
		t.Fatalf("the runner's token is %+v (%v), want an agent token of alice/writer stored by its hash", tok, err)
	}
	if code := s.claim(got.Access); code != http.StatusOK {
		t.Fatalf("claim with the joined runner's token: HTTP %d", code)
	}

	// The owners page lists it; bob cannot revoke it; alice's Revoke ends it at once.
	owners := s.srv.URL + "/p/website-v2/owners"
	resp, text, csrf := s.devicePage(s.cookie, owners)
	if resp.StatusCode != http.StatusOK || !strings.Contains(text, `data-runner="`+got.RunnerID+`"`) || !strings.Contains(text, "alice-laptop") {
		t.Fatalf("owners page: HTTP %d %s", resp.StatusCode, text)
	}
	revoke := s.srv.URL + "/p/website-v2/runners/" + got.RunnerID + "/revoke"
	post := func(cookie *http.Cookie, csrf, origin string) int {
		req, _ := http.NewRequest(http.MethodPost, revoke, strings.NewReader(url.Values{"csrf": {csrf}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", origin)
		req.AddCookie(cookie)
		resp, _ := s.do(req)
		return resp.StatusCode
	}
	if code := post(s.cookie, csrf, "https://evil.example"); code != http.StatusForbidden {
		t.Fatalf("cross-site revoke: HTTP %d, want 403", code)
	}
	bob := s.signIn("bob")
	_, _, bobCSRF := s.devicePage(bob, owners)
	if code := post(bob, bobCSRF, s.srv.URL); code == http.StatusSeeOther {
		t.Fatalf("bob revoked alice's runner")
	}
	if code := s.claim(got.Access); code != http.StatusOK {
		t.Fatalf("claim after refused revocations: HTTP %d", code)
	}
	if code := post(s.cookie, csrf, s.srv.URL); code != http.StatusSeeOther {
		t.Fatalf("revoke: HTTP %d", code)
	}
	if code := s.claim(got.Access); code != http.StatusUnauthorized {
		t.Fatalf("claim with a revoked runner's token: HTTP %d, want 401", code)
	}
	if _, text, _ := s.devicePage(s.cookie, owners+"?done=runner"); strings.Contains(text, `data-runner="`+got.RunnerID+`"`) {
		t.Fatalf("the owners page still lists the revoked runner")
	}
}

// TestDeviceGrantRefusesAStranger: a decision without a session, or
// cross-site, or with another owner's session choosing an agent not theirs,
// joins nothing: the runner keeps waiting.
func TestDeviceGrantRefusesAStranger(t *testing.T) {
	s := newStack(t)
	dev := s.deviceCode("box")
	_, _, csrf := s.devicePage(s.cookie, dev.Complete)
	// No session (a stranger holding the code and even alice's form token).
	if status, _ := s.decideDevice(nil, s.srv.URL, url.Values{"csrf": {csrf}, "code": {dev.UserCode}, "agent": {"alice/writer"}, "decision": {"allow"}}); status != http.StatusForbidden {
		t.Fatalf("decision without a session: HTTP %d, want 403", status)
	}
	// Alice's session, but posted from another site.
	if status, _ := s.decideDevice(s.cookie, "https://evil.example", url.Values{"csrf": {csrf}, "code": {dev.UserCode}, "agent": {"alice/writer"}, "decision": {"allow"}}); status != http.StatusForbidden {
		t.Fatalf("cross-site decision: HTTP %d, want 403", status)
	}
	// Alice's session without the form token.
	if status, _ := s.decideDevice(s.cookie, s.srv.URL, url.Values{"code": {dev.UserCode}, "agent": {"alice/writer"}, "decision": {"allow"}}); status != http.StatusForbidden {
		t.Fatalf("decision without the form token: HTTP %d, want 403", status)
	}
	// Bob, signed in, posts alice's agent by hand for a code he holds.
	bob := s.signIn("bob")
	resp, text, bobCSRF := s.devicePage(bob, dev.Complete)
	if resp.StatusCode != http.StatusOK || strings.Contains(text, "alice/writer") {
		t.Fatalf("bob's device page offers alice's agent: %s", text)
	}
	if status, text := s.decideDevice(bob, s.srv.URL, url.Values{"csrf": {bobCSRF}, "code": {dev.UserCode}, "agent": {"alice/writer"}, "decision": {"allow"}}); status != http.StatusBadRequest || !strings.Contains(text, "Choose one of your own agents") {
		t.Fatalf("bob choosing alice/writer: HTTP %d %s", status, text)
	}
	s.wantPoll(dev.DeviceCode, http.StatusBadRequest, "authorization_pending")
}

// TestDeviceGrantRefusesAnotherOwnersAgent: alice posting bob's agent by
// hand is refused and uses nothing; her own agent then works.
func TestDeviceGrantRefusesAnotherOwnersAgent(t *testing.T) {
	s := newStack(t)
	dev := s.deviceCode("box")
	if status, text := s.allow(dev.UserCode, "bob/reviewer"); status != http.StatusBadRequest || !strings.Contains(text, "Choose one of your own agents") {
		t.Fatalf("alice choosing bob/reviewer: HTTP %d %s", status, text)
	}
	s.wantPoll(dev.DeviceCode, http.StatusBadRequest, "authorization_pending")
	if status, text := s.allow(dev.UserCode, "alice/writer"); status != http.StatusOK {
		t.Fatalf("allow: HTTP %d %s", status, text)
	}
	if got := s.wantPoll(dev.DeviceCode, http.StatusOK, ""); got.Agent != "alice/writer" {
		t.Fatalf("joined %q", got.Agent)
	}
}

// TestDeviceGrantCodesWorkOnce: a user code decides once, a device code is
// exchanged once (a replay is invalid_grant), a denied code gets
// access_denied, an expired one expired_token, and polling faster than the
// interval slow_down.
func TestDeviceGrantCodesWorkOnce(t *testing.T) {
	s := newStack(t)
	dev := s.deviceCode("box")
	if status, _ := s.allow(dev.UserCode, "alice/writer"); status != http.StatusOK {
		t.Fatalf("allow: HTTP %d", status)
	}
	resp, _, csrf := s.devicePage(s.cookie, dev.Complete)
	if resp.StatusCode != http.StatusGone {
		t.Fatalf("a used code's page: HTTP %d, want 410", resp.StatusCode)
	}
	if status, text := s.decideDevice(s.cookie, s.srv.URL, url.Values{"csrf": {csrf}, "code": {dev.UserCode}, "agent": {"alice/writer"}, "decision": {"allow"}}); status != http.StatusGone {
		t.Fatalf("second decision on a used code: HTTP %d %s", status, text)
	}
	s.wantPoll(dev.DeviceCode, http.StatusOK, "")
	s.wantPoll(dev.DeviceCode, http.StatusBadRequest, "invalid_grant")

	// Polling again at once: slow_down.
	dev = s.deviceCode("box")
	s.wantPoll(dev.DeviceCode, http.StatusBadRequest, "authorization_pending")
	if status, a := s.post("/oauth/token", url.Values{"grant_type": {oauth.DeviceGrantType}, "device_code": {dev.DeviceCode}, "client_id": {oauth.RunnerClientID}}); status != http.StatusBadRequest || a.Error != "slow_down" {
		t.Fatalf("fast poll: HTTP %d %q", status, a.Error)
	}
	// Denied.
	if status, text := s.decideDevice(s.cookie, s.srv.URL, url.Values{"csrf": {csrf}, "code": {dev.UserCode}, "decision": {"deny"}}); status != http.StatusOK || !strings.Contains(text, "Denied") {
		t.Fatalf("deny: HTTP %d %s", status, text)
	}
	s.wantPoll(dev.DeviceCode, http.StatusBadRequest, "access_denied")
	s.wantPoll(dev.DeviceCode, http.StatusBadRequest, "invalid_grant")

	// Expired: neither the page nor the poll accepts it.
	dev = s.deviceCode("box")
	s.clock.advance(oauth.DeviceCodeLifespan)
	if resp, text, _ := s.devicePage(s.cookie, dev.Complete); resp.StatusCode != http.StatusGone || !strings.Contains(text, "expired") {
		t.Fatalf("expired code's page: HTTP %d %s", resp.StatusCode, text)
	}
	s.wantPoll(dev.DeviceCode, http.StatusBadRequest, "expired_token")

	// Unknown device codes and other clients.
	s.wantPoll("prk_od_nope", http.StatusBadRequest, "invalid_grant")
	if status, a := s.post("/oauth/device_authorization", url.Values{"client_id": {"someone-else"}}); status != http.StatusUnauthorized || a.Error != "invalid_client" {
		t.Fatalf("another client: HTTP %d %q", status, a.Error)
	}
}

// TestDeviceGrantIsRateLimited: a network gets DeviceRequestsPerNetwork codes
// a window; an owner tries AttemptsPerCode decisions on one code.
func TestDeviceGrantIsRateLimited(t *testing.T) {
	s := newStack(t)
	var last deviceAnswer
	for range oauth.DeviceRequestsPerNetwork {
		last = s.deviceCode("box")
	}
	if status, a := s.post("/oauth/device_authorization", url.Values{"client_id": {oauth.RunnerClientID}}); status != http.StatusTooManyRequests || a.Error != "slow_down" {
		t.Fatalf("device request past the bound: HTTP %d %q", status, a.Error)
	}
	_, _, csrf := s.devicePage(s.cookie, last.Complete)
	for i := range oauth.AttemptsPerCode {
		if status, _ := s.decideDevice(s.cookie, s.srv.URL, url.Values{"csrf": {csrf}, "code": {last.UserCode}, "agent": {"bob/reviewer"}, "decision": {"allow"}}); status != http.StatusBadRequest {
			t.Fatalf("attempt %d: HTTP %d", i, status)
		}
	}
	if status, _ := s.decideDevice(s.cookie, s.srv.URL, url.Values{"csrf": {csrf}, "code": {last.UserCode}, "agent": {"alice/writer"}, "decision": {"allow"}}); status != http.StatusTooManyRequests {
		t.Fatalf("attempt past the bound: HTTP %d, want 429", status)
	}
	s.wantPoll(last.DeviceCode, http.StatusBadRequest, "authorization_pending")
}
