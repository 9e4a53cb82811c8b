package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/useprickle/prickle/shared/auth/oauthstate"
	"github.com/useprickle/prickle/shared/kit/httprec"

	"github.com/ory/fosite"
	"github.com/ory/fosite/compose"

	"github.com/useprickle/prickle/shared/auth/oauthresource"
	"github.com/useprickle/prickle/shared/auth/session"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/admin"
)

// Lifetimes of what the server issues: access tokens are short, refresh
// tokens rotate on every use, and an authorization waits for the owner's
// consent as long as a sign-in link lives.
const (
	AccessTokenLifespan   = time.Hour
	RefreshTokenLifespan  = 30 * 24 * time.Hour
	AuthorizeCodeLifespan = 5 * time.Minute
	PendingLifespan       = session.LinkLifetime
)

// KindPending is the record of an authorization request waiting for the
// owner's consent, stored by the hash of its id (the consent page's path).
const KindPending = "pending"

// Directory is what the consent page reads and writes beyond oauthstate.Store: the
// owner's sessions, projects and agents; *store.Store satisfies it.
type Directory interface {
	session.Sessions
	OwnerProjects(ctx context.Context, owner string) ([]string, error)
	ListAgents(ctx context.Context, project string) ([]team.Agent, error)
	admin.Store
}

// Config is what the authorization server needs.
type Config struct {
	// BaseURL is the public base (PUBLIC_BASE_URL): the issuer, and base/mcp the one resource.
	BaseURL   string
	Grants    oauthstate.Store
	Directory Directory
	Keys      session.Keys
	// Documents fetches client ID metadata documents; nil refuses URL client ids.
	Documents *Documents
	// Device turns on the device authorization grant (prickle-runner login); nil leaves it off.
	Device *DeviceConfig
	Log    *slog.Logger
	Now    func() time.Time
}

// Server is the authorization server's HTTP handler.
type Server struct {
	cfg      Config
	provider fosite.OAuth2Provider
	resource *oauthresource.Resource
	mux      *http.ServeMux
}

// New composes fosite's authorization code, PKCE and refresh grants over
// oauthstate.Store and builds the routes; it does no I/O.
func New(cfg Config) (*Server, error) {
	if cfg.BaseURL == "" || cfg.Grants == nil || cfg.Directory == nil {
		return nil, errors.New("oauth: needs a base URL, grants and a directory")
	}
	cfg.BaseURL = strings.TrimSuffix(cfg.BaseURL, "/")
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Server{cfg: cfg, resource: oauthresource.New(cfg.BaseURL, nil)}
	fc := &fosite.Config{
		AccessTokenLifespan:            AccessTokenLifespan,
		RefreshTokenLifespan:           RefreshTokenLifespan,
		AuthorizeCodeLifespan:          AuthorizeCodeLifespan,
		EnforcePKCE:                    true,
		EnablePKCEPlainChallengeMethod: false,
		RefreshTokenScopes:             []string{},
		SanitationWhiteList:            []string{"redirect_uri"},
		ScopeStrategy:                  fosite.ExactScopeStrategy,
		AudienceMatchingStrategy:       fosite.ExactAudienceMatchingStrategy,
		TokenURL:                       cfg.BaseURL + "/oauth/token",
		AccessTokenIssuer:              cfg.BaseURL,
		MinParameterEntropy:            8,
	}
	st := &storage{grants: cfg.Grants, clients: s.client}
	s.provider = compose.Compose(fc, st, opaqueTokens{},
		compose.OAuth2AuthorizeExplicitFactory,
		compose.OAuth2RefreshTokenGrantFactory,
		compose.OAuth2PKCEFactory,
	)
	s.mux = http.NewServeMux()
	s.mux.HandleFunc("GET /.well-known/oauth-authorization-server", s.metadata)
	s.mux.Handle("GET "+oauthresource.MetadataPath, s.resource)
	s.mux.Handle("GET "+oauthresource.RootMetadataPath, s.resource)
	s.mux.HandleFunc("POST /oauth/register", s.register)
	s.mux.HandleFunc("OPTIONS /oauth/register", s.preflight)
	s.mux.HandleFunc("GET /oauth/authorize", s.authorize)
	s.mux.HandleFunc("GET /oauth/consent/{id}", s.consentPage)
	s.mux.HandleFunc("POST /oauth/consent/{id}", s.decide)
	s.mux.HandleFunc("POST /oauth/token", s.token)
	s.mux.HandleFunc("OPTIONS /oauth/token", s.preflight)
	if cfg.Device != nil {
		if cfg.Device.Store == nil || cfg.Device.Mint == nil {
			return nil, errors.New("oauth: the device grant needs its store and a minter")
		}
		s.mux.HandleFunc("POST /oauth/device_authorization", s.deviceAuthorization)
		s.mux.HandleFunc("GET /oauth/device", s.devicePage)
		s.mux.HandleFunc("POST /oauth/device", s.deviceDecide)
	}
	s.mux.HandleFunc("GET /oauth/clients", s.clientsPage)
	s.mux.HandleFunc("POST /oauth/clients/{grant}/revoke", s.revoke)
	return s, nil
}

// Paths lists the path patterns the server answers, for the local stack's mux and the template's routes.
var Paths = []string{"/.well-known/oauth-authorization-server", oauthresource.MetadataPath, oauthresource.RootMetadataPath, "/oauth/"}

// ServeHTTP serves a route and logs one line. Every answer, page, JSON,
// redirect or error, is nosniff: no browser reads it as another type.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := s.cfg.Now()
	w.Header().Set("X-Content-Type-Options", "nosniff")
	rec := httprec.New(w)
	s.mux.ServeHTTP(rec, r)
	// The query (codes, states) and bodies are never logged.
	s.cfg.Log.InfoContext(r.Context(), "oauth request", "method", r.Method, "path", r.URL.Path, "status", rec.Status,
		"duration_ms", s.cfg.Now().Sub(start).Milliseconds())
}

// metadata is RFC 8414's document: only what Prickle supports.
func (s *Server) metadata(w http.ResponseWriter, _ *http.Request) {
	b := s.cfg.BaseURL
	grants := []string{"authorization_code", "refresh_token"}
	doc := map[string]any{
		"issuer":                                b,
		"authorization_endpoint":                b + "/oauth/authorize",
		"token_endpoint":                        b + "/oauth/token",
		"registration_endpoint":                 b + "/oauth/register",
		"response_types_supported":              []string{"code"},
		"response_modes_supported":              []string{"query"},
		"grant_types_supported":                 grants,
		"code_challenge_methods_supported":      []string{"S256"},
		"token_endpoint_auth_methods_supported": []string{"none"},
		"scopes_supported":                      []string{oauthresource.Scope},
		"client_id_metadata_document_supported": s.cfg.Documents != nil,
		"service_documentation":                 b + "/docs/reference/mcp-tools",
	}
	if s.cfg.Device != nil {
		doc["grant_types_supported"] = append(grants, DeviceGrantType)
		doc["device_authorization_endpoint"] = b + "/oauth/device_authorization"
	}
	writeJSON(w, http.StatusOK, doc)
}

// preflight lets browser-based clients call registration and the token endpoint.
func (s *Server) preflight(w http.ResponseWriter, _ *http.Request) {
	cors(w)
	w.Header().Set("Access-Control-Allow-Methods", "POST")
	w.Header().Set("Access-Control-Allow-Headers", "Content-Type, Authorization, MCP-Protocol-Version")
	w.WriteHeader(http.StatusNoContent)
}

func cors(w http.ResponseWriter) { w.Header().Set("Access-Control-Allow-Origin", "*") }

// client finds a client for fosite: a registered one, or a metadata document's.
func (s *Server) client(ctx context.Context, id string) (fosite.Client, error) {
	c, err := s.lookupClient(ctx, id)
	if err != nil {
		return nil, err
	}
	return s.fositeClient(c), nil
}

func (s *Server) lookupClient(ctx context.Context, id string) (oauthstate.Client, error) {
	if IsDocumentID(id) {
		if s.cfg.Documents == nil {
			return oauthstate.Client{}, fosite.ErrInvalidClient.WithHint("This server does not fetch client ID metadata documents.")
		}
		c, err := s.cfg.Documents.Client(ctx, id)
		if err != nil {
			return oauthstate.Client{}, fosite.ErrInvalidClient.WithHintf("The client ID metadata document could not be used: %v", err)
		}
		return c, nil
	}
	c, err := s.cfg.Grants.OAuthClient(ctx, id)
	if errors.Is(err, oauthstate.ErrNotFound) {
		return oauthstate.Client{}, fosite.ErrInvalidClient.WithHint("No client is registered with this client_id.")
	}
	return c, err
}

func (s *Server) fositeClient(c oauthstate.Client) *fosite.DefaultClient {
	return &fosite.DefaultClient{
		ID: c.ID, RedirectURIs: c.RedirectURIs, Public: true,
		GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"},
		Scopes: []string{oauthresource.Scope}, Audience: []string{s.resource.URL()},
	}
}

// checkResource enforces RFC 8707: a resource parameter, when sent, names this MCP endpoint.
func (s *Server) checkResource(form url.Values) error {
	for _, v := range form["resource"] {
		if strings.TrimSuffix(v, "/") != s.resource.URL() {
			return &fosite.RFC6749Error{ErrorField: "invalid_target", DescriptionField: "The resource is not this server's.",
				HintField: fmt.Sprintf("The only resource is %s.", s.resource.URL()), CodeField: http.StatusBadRequest}
		}
	}
	return nil
}

// token is the token endpoint: code + PKCE verifier, or a refresh token.
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	cors(w)
	ctx := r.Context()
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	sess := &fosite.DefaultSession{}
	if err := r.ParseForm(); err != nil {
		s.provider.WriteAccessError(ctx, w, fosite.NewAccessRequest(sess), fosite.ErrInvalidRequest.WithHint("The form could not be read."))
		return
	}
	if s.cfg.Device != nil && r.PostForm.Get("grant_type") == DeviceGrantType {
		s.deviceToken(w, r)
		return
	}
	if err := s.checkResource(r.PostForm); err != nil {
		s.provider.WriteAccessError(ctx, w, fosite.NewAccessRequest(sess), err)
		return
	}
	ar, err := s.provider.NewAccessRequest(ctx, r, sess)
	if err != nil {
		s.logGrantError(ctx, "token request refused", err)
		s.provider.WriteAccessError(ctx, w, ar, err)
		return
	}
	resp, err := s.provider.NewAccessResponse(ctx, ar)
	if err != nil {
		s.logGrantError(ctx, "token response failed", err)
		s.provider.WriteAccessError(ctx, w, ar, err)
		return
	}
	s.provider.WriteAccessResponse(ctx, w, ar, resp)
}

func (s *Server) logGrantError(ctx context.Context, msg string, err error) {
	var rfc *fosite.RFC6749Error
	if errors.As(err, &rfc) && rfc.CodeField < 500 {
		s.cfg.Log.InfoContext(ctx, msg, "error", rfc.ErrorField, "hint", rfc.HintField)
		return
	}
	s.cfg.Log.ErrorContext(ctx, msg, "error", err.Error())
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
