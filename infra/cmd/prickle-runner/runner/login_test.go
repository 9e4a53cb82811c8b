package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeDevice is Prickle's device grant as the runner meets it: the answers
// to successive polls are scripted.
type fakeDevice struct {
	mu    sync.Mutex
	polls []string // error codes to answer in turn; "" is the token
	seen  []string // what each poll sent: grant_type, device_code, client_id
	name  string
}

func (f *fakeDevice) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	_ = r.ParseForm()
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/oauth/device_authorization":
		f.name = r.PostForm.Get("name")
		if r.PostForm.Get("client_id") != "prickle-runner" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"device_code": "prk_od_x", "user_code": "BCDF-GHJK",
			"verification_uri": "http://" + r.Host + "/oauth/device", "verification_uri_complete": "http://" + r.Host + "/oauth/device?code=BCDF-GHJK",
			"expires_in": 600, "interval": 5})
	case "/oauth/token":
		f.seen = append(f.seen, r.PostForm.Get("grant_type")+" "+r.PostForm.Get("device_code")+" "+r.PostForm.Get("client_id"))
		next := f.polls[0]
		f.polls = f.polls[1:]
		if next == "" {
			_ = json.NewEncoder(w).Encode(map[string]any{"access_token": "prk_a_secret", "token_type": "Bearer", "agent": "alice/writer", "runner_id": "rnr_1"})
			return
		}
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": next, "error_description": "d"})
	default:
		http.NotFound(w, r)
	}
}

func login(t *testing.T, f *fakeDevice) (Joined, []time.Duration, string, error) {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	var waits []time.Duration
	var out bytes.Buffer
	now := time.Now()
	j, err := Login{PrickleURL: srv.URL + "/", Name: "box", Out: &out, Now: func() time.Time { return now },
		Sleep: func(_ context.Context, d time.Duration) error { waits = append(waits, d); now = now.Add(d); return nil }}.Run(context.Background())
	return j, waits, out.String(), err
}

// TestLoginPollsAsTheServerSays: the code and link are shown; polls wait the
// interval, 5 s more after each slow_down, go on while pending, and the
// token comes back with its agent.
func TestLoginPollsAsTheServerSays(t *testing.T) {
	f := &fakeDevice{polls: []string{"authorization_pending", "slow_down", "authorization_pending", ""}}
	j, waits, out, err := login(t, f)
	if err != nil {
		t.Fatal(err)
	}
	if j.Agent != "alice/writer" || j.Token != "prk_a_secret" || j.RunnerID != "rnr_1" || strings.HasSuffix(j.PrickleURL, "/") {
		t.Fatalf("joined %+v", j)
	}
	want := []time.Duration{5 * time.Second, 5 * time.Second, 10 * time.Second, 10 * time.Second}
	if len(waits) != len(want) {
		t.Fatalf("waits %v, want %v", waits, want)
	}
	for i := range want {
		if waits[i] != want[i] {
			t.Fatalf("waits %v, want %v", waits, want)
		}
	}
	if !strings.Contains(out, "/oauth/device?code=BCDF-GHJK") || !strings.Contains(out, "BCDF-GHJK") || !strings.Contains(out, "10 minutes") {
		t.Fatalf("shown: %s", out)
	}
	if f.name != "box" || f.seen[0] != "urn:ietf:params:oauth:grant-type:device_code prk_od_x prickle-runner" {
		t.Fatalf("sent name %q, polls %v", f.name, f.seen)
	}
}

// TestLoginStopsOnDenialAndExpiry: access_denied and expired_token end the
// login with what to do, and nothing is joined.
func TestLoginStopsOnDenialAndExpiry(t *testing.T) {
	for code, want := range map[string]string{"access_denied": "denied", "expired_token": "expired", "invalid_grant": "refused"} {
		_, _, _, err := login(t, &fakeDevice{polls: []string{"authorization_pending", code}})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err %v, want %q", code, err, want)
		}
	}
}

// TestJoinedTokenIsKeptPrivately: the token is kept 0600 in the state
// folder, and a config with no token of its own uses it, for that Prickle
// only; a config naming its token (agent_token_env) keeps using that.
func TestJoinedTokenIsKeptPrivately(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	if err := SaveJoined(dir, Joined{PrickleURL: "http://127.0.0.1:3000", Agent: "alice/writer", Token: "prk_a_secret"}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(JoinedPath(dir))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("kept token: %v %v, want mode 0600", fi, err)
	}
	cfg, err := ParseConfig([]byte("prickle_url: http://127.0.0.1:3000/\nmode: pull\nstate_dir: " + dir + "\nprojects:\n  \"*\": {dir: .}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if tok, err := cfg.Token(); err != nil || tok != "prk_a_secret" {
		t.Fatalf("token from the login: %q %v", tok, err)
	}
	other := cfg
	other.PrickleURL = "https://prickle.example.com"
	if _, err := other.Token(); err == nil || !strings.Contains(err.Error(), "prickle-runner login") {
		t.Fatalf("another Prickle's token was used: %v", err)
	}
	t.Setenv("PRICKLE_TEST_TOKEN", "prk_a_env")
	env := cfg
	env.AgentTokenEnv = "PRICKLE_TEST_TOKEN"
	if tok, err := env.Token(); err != nil || tok != "prk_a_env" {
		t.Fatalf("agent_token_env: %q %v", tok, err)
	}
	if _, err := LoadJoined(t.TempDir(), cfg.PrickleURL); err != ErrNotJoined {
		t.Fatalf("no login: %v, want ErrNotJoined", err)
	}
}
