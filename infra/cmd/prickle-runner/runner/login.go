package runner

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/useprickle/prickle/shared/kit/wait"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// LoginCommand is `prickle-runner login <Prickle URL>`: the runner joins its
// agent by its owner's sign-in (OAuth 2.0 device authorization, RFC 8628)
// and keeps the agent token it receives in its state folder.
const LoginCommand = "login"

// The device grant as Prickle's authorization server serves it.
const (
	deviceGrantType = "urn:ietf:params:oauth:grant-type:device_code"
	runnerClientID  = "prickle-runner"
	// JoinedFile, in the state folder, keeps the token a login received (0600).
	JoinedFile = "agent-token.json"
)

// ErrNotJoined means no login's token is kept for this Prickle.
var ErrNotJoined = errors.New("not joined: run prickle-runner login")

// Joined is what a login keeps: which Prickle, which agent, the joined
// runner's id (as the owners page lists it) and the agent token.
type Joined struct {
	PrickleURL string    `json:"prickle_url"`
	Agent      string    `json:"agent"`
	RunnerID   string    `json:"runner_id"`
	Token      string    `json:"token"`
	JoinedAt   time.Time `json:"joined_at"`
}

// JoinedPath is where a state folder keeps the login's token.
func JoinedPath(stateDir string) string { return filepath.Join(stateDir, JoinedFile) }

// LoadJoined reads the login kept in stateDir for prickleURL; none, or one
// of another Prickle, is ErrNotJoined.
func LoadJoined(stateDir, prickleURL string) (Joined, error) {
	b, err := os.ReadFile(JoinedPath(stateDir))
	if errors.Is(err, os.ErrNotExist) {
		return Joined{}, ErrNotJoined
	}
	if err != nil {
		return Joined{}, fmt.Errorf("read the login's token: %w", err)
	}
	var j Joined
	if err := json.Unmarshal(b, &j); err != nil || j.Token == "" {
		return Joined{}, fmt.Errorf("%s holds no token: run prickle-runner login again", JoinedPath(stateDir))
	}
	if strings.TrimRight(j.PrickleURL, "/") != strings.TrimRight(prickleURL, "/") {
		return Joined{}, fmt.Errorf("%w: %s holds a token of %s, not %s", ErrNotJoined, JoinedPath(stateDir), j.PrickleURL, prickleURL)
	}
	return j, nil
}

// SaveJoined writes the login into stateDir, readable by its user only
// (0600 in a 0700 folder), replacing any earlier one at once.
func SaveJoined(stateDir string, j Joined) error {
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return fmt.Errorf("state folder: %w", err)
	}
	b, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(stateDir, ".agent-token-*")
	if err != nil {
		return fmt.Errorf("keep the token: %w", err)
	}
	defer os.Remove(f.Name())
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return fmt.Errorf("keep the token: %w", err)
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("keep the token: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("keep the token: %w", err)
	}
	if err := os.Rename(f.Name(), JoinedPath(stateDir)); err != nil {
		return fmt.Errorf("keep the token: %w", err)
	}
	return nil
}

// Login asks Prickle for a device code, shows its owner the code and link,
// and polls until the owner allows or denies it, or the code expires.
type Login struct {
	PrickleURL string
	// Name is what the owner sees of this machine (default: its host name).
	Name string
	HTTP *http.Client
	// Out is where the code and link are shown.
	Out io.Writer
	// Sleep waits between polls; nil waits on the real clock.
	Sleep func(ctx context.Context, d time.Duration) error
	Now   func() time.Time
}

type deviceAnswer struct {
	DeviceCode              string `json:"device_code"`
	UserCode                string `json:"user_code"`
	VerificationURI         string `json:"verification_uri"`
	VerificationURIComplete string `json:"verification_uri_complete"`
	ExpiresIn               int    `json:"expires_in"`
	Interval                int    `json:"interval"`
	AccessToken             string `json:"access_token"`
	Agent                   string `json:"agent"`
	RunnerID                string `json:"runner_id"`
	Error                   string `json:"error"`
	Description             string `json:"error_description"`
}

// Run is the whole login: it returns the joined agent and its token (not yet kept).
func (l Login) Run(ctx context.Context) (Joined, error) {
	base := strings.TrimRight(l.PrickleURL, "/")
	if u, err := url.Parse(base); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return Joined{}, fmt.Errorf("%q is not a Prickle URL (https://prickle.example.com, or http://127.0.0.1:3000 locally)", l.PrickleURL)
	}
	if l.HTTP == nil {
		l.HTTP = &http.Client{Timeout: 30 * time.Second}
	}
	if l.Sleep == nil {
		l.Sleep = wait.For
	}
	if l.Now == nil {
		l.Now = time.Now
	}
	if l.Out == nil {
		l.Out = io.Discard
	}
	name := l.Name
	if name == "" {
		name, _ = os.Hostname()
	}
	status, dev, err := l.post(ctx, base+"/oauth/device_authorization", url.Values{"client_id": {runnerClientID}, "name": {name}})
	if err != nil {
		return Joined{}, err
	}
	if status == http.StatusNotFound {
		return Joined{}, fmt.Errorf("%s has no device login (its OAuth server is off, or it is older): use agent_token_file or agent_token_env", base)
	}
	if status != http.StatusOK || dev.DeviceCode == "" || dev.UserCode == "" {
		return Joined{}, fmt.Errorf("%s refused the login (HTTP %d): %s", base, status, cmp.Or(dev.Description, dev.Error))
	}
	link := cmp.Or(dev.VerificationURIComplete, dev.VerificationURI)
	fmt.Fprintf(l.Out, "To let this machine run one of your agents, open this link, sign in and allow:\n\n    %s\n\nand check that the page shows the code  %s  (it works once, for %d minutes).\n",
		link, dev.UserCode, max(dev.ExpiresIn/60, 1))
	interval := time.Duration(max(dev.Interval, 5)) * time.Second
	deadline := l.Now().Add(time.Duration(dev.ExpiresIn) * time.Second)
	form := url.Values{"grant_type": {deviceGrantType}, "device_code": {dev.DeviceCode}, "client_id": {runnerClientID}}
	for {
		if err := l.Sleep(ctx, interval); err != nil {
			return Joined{}, err
		}
		if dev.ExpiresIn > 0 && l.Now().After(deadline) {
			return Joined{}, errors.New("the code expired before the owner allowed it: run prickle-runner login again")
		}
		status, tok, err := l.post(ctx, base+"/oauth/token", form)
		if err != nil || status >= 500 {
			continue // the network or Prickle failed for a moment: ask again at the next interval
		}
		switch {
		case status == http.StatusOK && tok.AccessToken != "":
			return Joined{PrickleURL: base, Agent: tok.Agent, RunnerID: tok.RunnerID, Token: tok.AccessToken, JoinedAt: l.Now().UTC()}, nil
		case tok.Error == "authorization_pending":
		case tok.Error == "slow_down":
			interval += 5 * time.Second
		case tok.Error == "access_denied":
			return Joined{}, errors.New("the owner denied this runner: nothing was joined")
		case tok.Error == "expired_token":
			return Joined{}, errors.New("the code expired before the owner allowed it: run prickle-runner login again")
		default:
			return Joined{}, fmt.Errorf("%s refused the login (HTTP %d): %s", base, status, cmp.Or(tok.Description, tok.Error))
		}
	}
}

func (l Login) post(ctx context.Context, u string, form url.Values) (int, deviceAnswer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(form.Encode()))
	if err != nil {
		return 0, deviceAnswer{}, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := l.HTTP.Do(req)
	if err != nil {
		return 0, deviceAnswer{}, fmt.Errorf("reach %s: %w", u, err)
	}
	defer resp.Body.Close()
	var a deviceAnswer
	_ = json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&a)
	return resp.StatusCode, a, nil
}
