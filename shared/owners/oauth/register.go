package oauth

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/useprickle/prickle/shared/auth/oauthstate"
	"github.com/useprickle/prickle/shared/auth/session"
	"github.com/useprickle/prickle/shared/kit/plaintext"
)

// Bounds on what a client may register: every stored input is bounded.
const (
	maxRegistrationBody = 16 << 10
	maxRedirectURIs     = 10
	maxRedirectURI      = 2000
	maxClientName       = 100
)

// registrationRequest is the part of RFC 7591's metadata Prickle reads.
type registrationRequest struct {
	RedirectURIs            []string `json:"redirect_uris"`
	ClientName              string   `json:"client_name"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
}

// register is RFC 7591 dynamic client registration, for public clients
// only, rate limited per network.
func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	cors(w)
	ok, err := s.cfg.Grants.AllowOAuthRegistration(r.Context(), networkKey(r), s.cfg.Now())
	if err != nil {
		s.cfg.Log.ErrorContext(r.Context(), "registration rate check failed", "error", err.Error())
		registrationError(w, http.StatusServiceUnavailable, "temporarily_unavailable", "try again in a minute")
		return
	}
	if !ok {
		w.Header().Set("Retry-After", strconv.Itoa(int(oauthstate.RegistrationWindow/time.Second)))
		registrationError(w, http.StatusTooManyRequests, "too_many_requests",
			fmt.Sprintf("too many clients were registered in the last minutes (from your network or from all together); wait up to %d minutes", int(oauthstate.RegistrationWindow/time.Minute)))
		return
	}
	var req registrationRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxRegistrationBody))
	if err := dec.Decode(&req); err != nil {
		registrationError(w, http.StatusBadRequest, "invalid_client_metadata", "the body must be a JSON object of at most 16 KiB")
		return
	}
	c, merr := validateRegistration(req)
	if merr != nil {
		registrationError(w, http.StatusBadRequest, merr.code, merr.msg)
		return
	}
	id, err2 := newSecret("prk_cl_")
	if err2 != nil {
		registrationError(w, http.StatusInternalServerError, "server_error", "could not register")
		return
	}
	c.ID, c.Registration, c.CreatedAt = id, oauthstate.RegisteredDynamically, s.cfg.Now().UTC()
	if err := s.cfg.Grants.PutOAuthClient(r.Context(), c); err != nil {
		s.cfg.Log.ErrorContext(r.Context(), "store client failed", "error", err.Error())
		registrationError(w, http.StatusInternalServerError, "server_error", "could not register")
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{
		"client_id": c.ID, "client_id_issued_at": c.CreatedAt.Unix(), "client_name": c.Name,
		"redirect_uris": c.RedirectURIs, "grant_types": []string{"authorization_code", "refresh_token"},
		"response_types": []string{"code"}, "token_endpoint_auth_method": "none",
	})
}

type metadataError struct{ code, msg string }

// validateRegistration checks RFC 7591 metadata, as a registration or a
// client ID metadata document carries it.
func validateRegistration(req registrationRequest) (oauthstate.Client, *metadataError) {
	bad := func(code, format string, a ...any) (oauthstate.Client, *metadataError) {
		return oauthstate.Client{}, &metadataError{code, fmt.Sprintf(format, a...)}
	}
	if m := req.TokenEndpointAuthMethod; m != "" && m != "none" {
		return bad("invalid_client_metadata", "token_endpoint_auth_method must be none: Prickle registers public clients only (PKCE)")
	}
	for _, g := range req.GrantTypes {
		if g != "authorization_code" && g != "refresh_token" {
			return bad("invalid_client_metadata", "grant type %q is not supported (authorization_code, refresh_token)", clip(g, 40))
		}
	}
	for _, t := range req.ResponseTypes {
		if t != "code" {
			return bad("invalid_client_metadata", "response type %q is not supported (code)", clip(t, 40))
		}
	}
	if len(req.RedirectURIs) == 0 || len(req.RedirectURIs) > maxRedirectURIs {
		return bad("invalid_redirect_uri", "redirect_uris needs 1 to %d URIs", maxRedirectURIs)
	}
	for _, u := range req.RedirectURIs {
		if msg := checkRedirectURI(u); msg != "" {
			return bad("invalid_redirect_uri", "%s", msg)
		}
	}
	name := strings.TrimSpace(plaintext.Strip(req.ClientName))
	if name == "" {
		name = "an unnamed client"
	}
	return oauthstate.Client{Name: clip(name, maxClientName), RedirectURIs: slices.Clone(req.RedirectURIs)}, nil
}

// checkRedirectURI accepts https URIs and http on a loopback address (native
// apps, RFC 8252), absolute, without fragment or credentials.
func checkRedirectURI(raw string) string {
	if len(raw) > maxRedirectURI {
		return fmt.Sprintf("a redirect URI is longer than %d characters", maxRedirectURI)
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" {
		return "a redirect URI is not an absolute URL"
	}
	if u.Fragment != "" || u.User != nil {
		return "a redirect URI may not carry a fragment or credentials"
	}
	switch u.Scheme {
	case "https":
		return ""
	case "http":
		if h := u.Hostname(); h == "127.0.0.1" || h == "localhost" || h == "[::1]" || h == "::1" {
			return ""
		}
	}
	return "a redirect URI must be https, or http on a loopback address"
}

func registrationError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]string{"error": code, "error_description": msg})
}

// networkKey is the hash of the caller's network (its address, IPv6 as its
// /64), so no address is stored in the clear.
func networkKey(r *http.Request) string {
	sum := sha256.Sum256([]byte("oauth-register " + session.Client(r)))
	return hex.EncodeToString(sum[:16])
}

// clip shortens s to at most n runes.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
