package oauth

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/auth/oauthstate"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/mint"
)

// The device authorization grant (RFC 8628) by which a runner joins its
// agent: `prickle-runner login` asks for a device code and shows the owner a
// short user code and a link; the owner signs in, checks the code, picks one
// of their own agents and allows; the runner, polling the token endpoint,
// then receives a new token of that agent (minted as every agent token,
// stored as its hash), and the owners page lists the joined runner until
// its owner revokes it.
const (
	// DeviceGrantType is the token endpoint's grant_type for the device code.
	DeviceGrantType = "urn:ietf:params:oauth:grant-type:device_code"
	// RunnerClientID is the one public client of the device grant.
	RunnerClientID = "prickle-runner"
	// DeviceCodeLifespan is how long a device code and its user code last.
	DeviceCodeLifespan = 10 * time.Minute
	// DeviceInterval is the least time between two polls of one device code.
	DeviceInterval = 5 * time.Second
	// DeviceRateWindow is the window of the device grant's bounds.
	DeviceRateWindow = 10 * time.Minute
	// DeviceRequestsPerNetwork bounds the device codes one network asks for in a window.
	DeviceRequestsPerNetwork = 10
	// CodeAttemptsPerOwner bounds the codes an owner looks up or decides on in a window.
	CodeAttemptsPerOwner = 20
	// AttemptsPerCode bounds the decisions tried on one user code in a window.
	AttemptsPerCode = 5

	devicePrefix = "prk_od_"
	// userCodeAlphabet has no vowels (no words) and no look-alike digits;
	// 8 letters of 20 are about 34.6 bits.
	userCodeAlphabet = "BCDFGHJKLMNPQRSTVWXZ"
	userCodeLength   = 8
	// maxRunnerName bounds the name (host) a runner sends.
	maxRunnerName = 64
	decisionAllow = "allow"
	decisionDeny  = "deny"
)

// DeviceConfig turns the device grant on; both are required.
type DeviceConfig struct {
	Store oauthstate.DeviceStore
	Mint  *mint.Tokens
}

// deviceRequest is what a device code's records keep besides the hashes.
type deviceRequest struct {
	Name  string `json:"name"`
	Owner string `json:"owner,omitempty"`
	Agent string `json:"agent,omitempty"`
}

// deviceAuthorization is POST /oauth/device_authorization (RFC 8628 §3.1).
func (s *Server) deviceAuthorization(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
	if err := r.ParseForm(); err != nil {
		deviceError(w, http.StatusBadRequest, "invalid_request", "The form could not be read.")
		return
	}
	if r.PostForm.Get("client_id") != RunnerClientID {
		deviceError(w, http.StatusUnauthorized, "invalid_client", "The device grant is for prickle-runner: send client_id="+RunnerClientID+".")
		return
	}
	now := s.cfg.Now()
	ok, err := s.cfg.Device.Store.AllowOAuthAttempt(ctx, "device#net#"+networkKey(r), DeviceRequestsPerNetwork, DeviceRateWindow, now)
	if err != nil {
		s.deviceFailed(w, r, err)
		return
	}
	if !ok {
		w.Header().Set("Retry-After", strconv.Itoa(int(DeviceRateWindow/time.Second)))
		deviceError(w, http.StatusTooManyRequests, "slow_down",
			fmt.Sprintf("This network asked for %d codes in %d minutes; try again later.", DeviceRequestsPerNetwork, int(DeviceRateWindow/time.Minute)))
		return
	}
	deviceCode, err := newSecret(devicePrefix)
	if err != nil {
		s.deviceFailed(w, r, err)
		return
	}
	userCode, err := s.newUserCode(ctx)
	if err != nil {
		s.deviceFailed(w, r, err)
		return
	}
	req, _ := json.Marshal(deviceRequest{Name: runnerName(r.PostForm.Get("name"))})
	exp := now.Add(DeviceCodeLifespan)
	dh, uh := identity.Hash(deviceCode), identity.Hash(userCode)
	for _, rec := range []oauthstate.Record{
		{Kind: oauthstate.KindDevice, Hash: dh, Family: uh, Active: true, Expires: exp, Request: req},
		{Kind: oauthstate.KindUserCode, Hash: uh, Family: dh, Active: true, Expires: exp, Request: req},
	} {
		if err := s.cfg.Grants.PutOAuthRecord(ctx, rec); err != nil {
			s.deviceFailed(w, r, err)
			return
		}
	}
	shown := formatUserCode(userCode)
	writeJSON(w, http.StatusOK, map[string]any{
		"device_code":               deviceCode,
		"user_code":                 shown,
		"verification_uri":          s.cfg.BaseURL + "/oauth/device",
		"verification_uri_complete": s.cfg.BaseURL + "/oauth/device?code=" + shown,
		"expires_in":                int(DeviceCodeLifespan / time.Second),
		"interval":                  int(DeviceInterval / time.Second),
	})
}

// newUserCode draws a user code no live device code has.
func (s *Server) newUserCode(ctx context.Context) (string, error) {
	for range 5 {
		b := make([]byte, userCodeLength)
		for i := range b {
			n, err := rand.Int(rand.Reader, big.NewInt(int64(len(userCodeAlphabet))))
			if err != nil {
				return "", fmt.Errorf("user code entropy: %w", err)
			}
			b[i] = userCodeAlphabet[n.Int64()]
		}
		_, err := s.cfg.Grants.OAuthRecord(ctx, oauthstate.KindUserCode, identity.Hash(string(b)))
		if errors.Is(err, oauthstate.ErrNotFound) {
			return string(b), nil
		}
		if err != nil {
			return "", err
		}
	}
	return "", errors.New("no free user code after 5 draws")
}

// normalUserCode is the code as stored ("BCDFGHJK") from what an owner typed
// ("bcdf-ghjk", "BCDF GHJK"), or "" when it cannot be a code.
func normalUserCode(typed string) string {
	if len(typed) > 32 {
		return ""
	}
	var b strings.Builder
	for _, r := range strings.ToUpper(typed) {
		switch {
		case r == '-' || unicode.IsSpace(r):
		case strings.ContainsRune(userCodeAlphabet, r):
			b.WriteRune(r)
		default:
			return ""
		}
	}
	if b.Len() != userCodeLength {
		return ""
	}
	return b.String()
}

// formatUserCode is the code as shown: "BCDF-GHJK".
func formatUserCode(code string) string {
	if len(code) != userCodeLength {
		return ""
	}
	return code[:4] + "-" + code[4:]
}

// runnerName keeps the printable part of the name a runner sends, bounded.
func runnerName(s string) string {
	var b strings.Builder
	n := 0
	for _, r := range strings.TrimSpace(s) {
		if n == maxRunnerName {
			break
		}
		if unicode.IsPrint(r) {
			b.WriteRune(r)
			n++
		}
	}
	if b.Len() == 0 {
		return "a runner"
	}
	return b.String()
}

// deviceToken is the token endpoint for grant_type=DeviceGrantType (RFC 8628 §3.4, §3.5).
func (s *Server) deviceToken(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	form := r.PostForm
	if form.Get("client_id") != RunnerClientID {
		deviceError(w, http.StatusUnauthorized, "invalid_client", "The device grant is for prickle-runner: send client_id="+RunnerClientID+".")
		return
	}
	code := form.Get("device_code")
	if !strings.HasPrefix(code, devicePrefix) || len(code) > 100 {
		deviceError(w, http.StatusBadRequest, "invalid_grant", "This is not a device code of this server.")
		return
	}
	dh := identity.Hash(code)
	now := s.cfg.Now()
	ok, err := s.cfg.Device.Store.AllowOAuthAttempt(ctx, "device#poll#"+dh, 1, DeviceInterval, now)
	if err != nil {
		s.deviceFailed(w, r, err)
		return
	}
	if !ok {
		deviceError(w, http.StatusBadRequest, "slow_down", fmt.Sprintf("Poll at most once every %d seconds.", int(DeviceInterval/time.Second)))
		return
	}
	rec, err := s.cfg.Grants.OAuthRecord(ctx, oauthstate.KindDevice, dh)
	switch {
	case errors.Is(err, oauthstate.ErrNotFound):
		deviceError(w, http.StatusBadRequest, "invalid_grant", "This device code is not known.")
		return
	case err != nil:
		s.deviceFailed(w, r, err)
		return
	case !rec.Active:
		deviceError(w, http.StatusBadRequest, "invalid_grant", "This device code was used already.")
		return
	case !now.Before(rec.Expires):
		deviceError(w, http.StatusBadRequest, "expired_token", expiredMessage())
		return
	}
	dec, err := s.cfg.Grants.OAuthRecord(ctx, oauthstate.KindDeviceDecision, dh)
	if errors.Is(err, oauthstate.ErrNotFound) {
		deviceError(w, http.StatusBadRequest, "authorization_pending", "The owner has not decided yet.")
		return
	}
	if err != nil {
		s.deviceFailed(w, r, err)
		return
	}
	// One exchange wins: a replayed or racing one finds the code used.
	if err := s.cfg.Grants.DeactivateOAuthRecord(ctx, oauthstate.KindDevice, dh); err != nil {
		if errors.Is(err, oauthstate.ErrInactive) {
			deviceError(w, http.StatusBadRequest, "invalid_grant", "This device code was used already.")
			return
		}
		s.deviceFailed(w, r, err)
		return
	}
	if dec.Family != decisionAllow {
		deviceError(w, http.StatusBadRequest, "access_denied", "The owner denied this runner.")
		return
	}
	var d deviceRequest
	if err := json.Unmarshal(dec.Request, &d); err != nil || d.Owner == "" || d.Agent == "" {
		s.deviceFailed(w, r, fmt.Errorf("stored device decision: %v", err))
		return
	}
	id := team.RandomID("rnr_")
	secret, err := s.cfg.Device.Mint.AgentTokenBy(ctx, mint.ByRunnerLogin(d.Owner, id, d.Name), d.Agent)
	if err != nil {
		s.deviceFailed(w, r, err)
		return
	}
	hash := identity.Hash(secret)
	if err := s.cfg.Device.Store.PutJoinedRunner(ctx, oauthstate.JoinedRunner{ID: id, Owner: d.Owner, Agent: d.Agent, Name: d.Name,
		TokenHash: hash, CreatedAt: now.UTC()}); err != nil {
		// A token its owner could not see or revoke must not work.
		_ = s.cfg.Device.Mint.Store.RevokeToken(ctx, hash)
		s.deviceFailed(w, r, err)
		return
	}
	s.cfg.Log.InfoContext(ctx, "runner joined", "owner", d.Owner, "agent", d.Agent, "runner", id)
	writeJSON(w, http.StatusOK, map[string]any{"access_token": secret, "token_type": "Bearer", "agent": d.Agent, "runner_id": id})
}

func expiredMessage() string {
	return fmt.Sprintf("This code expired (codes last %d minutes): run prickle-runner login again.", int(DeviceCodeLifespan/time.Minute))
}

// deviceError is an RFC 6749 §5.2 error answer.
func deviceError(w http.ResponseWriter, status int, code, description string) {
	writeJSON(w, status, map[string]string{"error": code, "error_description": description})
}

func (s *Server) deviceFailed(w http.ResponseWriter, r *http.Request, err error) {
	s.cfg.Log.ErrorContext(r.Context(), "device grant failed", "error", err.Error())
	deviceError(w, http.StatusInternalServerError, "server_error", "Prickle could not finish this. Try again in a minute.")
}
