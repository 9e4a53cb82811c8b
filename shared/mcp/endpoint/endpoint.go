// Package endpoint is Prickle's MCP edge, HTTP and MCP in one layer between
// the Lambda adapter (lambdamcp) and the catalog: it checks the Origin,
// authenticates the bearer token, bounds the body, checks a tool call's
// arguments once against the catalog, routes by the Mcp-Name header as the
// cloud's routing rules do, serves MCP with mcp-go (tools.go: the servers,
// and the tool handler that runs the catalog's tool over the team service)
// and logs one JSON line per request. The caller, the checked arguments and
// a call's outcome are values the edge holds for the request and hands on
// as arguments, never through the request context. The same handler runs
// locally and in Lambda.
package endpoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/auth/oauthresource"
	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/kit/httprec"
	"github.com/useprickle/prickle/shared/kit/jsonlimit"
	"github.com/useprickle/prickle/shared/mcp/catalog"
	"github.com/useprickle/prickle/shared/team"
)

// MaxBody is the largest request body accepted; larger ones get 413.
const MaxBody = 1 << 20

// maxBodyDepth is how deep a tool call's body may nest: the JSON-RPC
// request and its params around the arguments.
const maxBodyDepth = 2 + catalog.MaxArgumentDepth

// Config is what the endpoint needs: the service, the token lookup, a logger and a clock.
type Config struct {
	Service *team.Service
	Tokens  identity.TokenLookup
	Log     *slog.Logger
	Now     func() time.Time
	// Tools limits the endpoint to some tools (a tool function serves one);
	// empty serves the whole catalog, as the mcp front does.
	Tools []string
	// ToolHandler, on the front, gives the handler that serves a tool on its
	// own (the tool's Lambda function, or its in-process endpoint locally);
	// tool calls are handed to it with the caller's original request, so
	// each tool runs with its own least privilege. Nil serves tool calls here.
	ToolHandler func(tool string) http.Handler
	// AllowedOrigins are the exact origins (scheme://host[:port]) whose
	// browser requests are served; a request with any other Origin header,
	// "null" included, gets 403. Requests without Origin (SDK clients,
	// agents) are not affected.
	AllowedOrigins []string
	// OAuth, when set, makes /mcp an OAuth protected resource too: 401s
	// name its metadata, and its access tokens (prk_o_…) are accepted for
	// this resource only. Agent and run tokens work as without it.
	OAuth *oauthresource.Resource
}

// Handler serves MCP over streamable HTTP, statelessly, for both protocol eras.
type Handler struct {
	cfg Config
	// tools are the tools this endpoint serves; servers answer all but their calls.
	tools   map[string]*catalog.Tool
	servers servers
}

// New builds the endpoint handler.
func New(cfg Config) (*Handler, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	tools, servers, err := newServers(cfg.Log, cfg.Tools...)
	if err != nil {
		return nil, fmt.Errorf("build MCP server: %w", err)
	}
	return &Handler{cfg: cfg, tools: tools, servers: servers}, nil
}

// ServeHTTP authenticates, bounds, validates, routes and logs one request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := h.cfg.Now()
	rec := &recorder{Recorder: httprec.New(w)}
	line := requestLog{method: r.Method}
	defer func() { h.logRequest(r, rec, &line, start) }()

	if h.forbiddenOrigin(rec, r, &line) {
		return
	}

	caller, err := h.authenticate(r)
	if errors.Is(err, team.ErrThrottled) || errors.Is(err, team.ErrUnavailable) {
		// The token could not be looked up (the database throttled or did
		// not answer): a temporary failure, not a bad token.
		line.outcome = OutcomeUnavailable
		if errors.Is(err, team.ErrThrottled) {
			line.outcome = OutcomeThrottled
		}
		rec.Header().Set("Retry-After", "2")
		writeJSON(rec, http.StatusServiceUnavailable, rpcError(nil, mcp.INTERNAL_ERROR, "temporarily unavailable: Prickle could not check your token because its database is busy; nothing was done, retry in a few seconds"))
		return
	}
	if errors.Is(err, oauthresource.ErrInsufficientScope) {
		line.outcome = "insufficient_scope"
		rec.Header().Set("WWW-Authenticate", h.cfg.OAuth.ScopeChallenge())
		writeJSON(rec, http.StatusForbidden, rpcError(nil, -32001, "forbidden: the access token was not granted the prickle scope; connect again and consent"))
		return
	}
	if err != nil {
		line.outcome = "unauthorized"
		rec.Header().Set("WWW-Authenticate", h.challenge(r.Header.Get("Authorization") != ""))
		writeJSON(rec, http.StatusUnauthorized, rpcError(nil, -32001, "unauthorized: send Authorization: Bearer <your Prickle agent token>"))
		return
	}
	line.caller = caller.Agent
	line.task = caller.TaskID

	var body []byte
	if r.Body != nil {
		body, err = io.ReadAll(io.LimitReader(r.Body, MaxBody+1))
		if err != nil {
			line.outcome = "bad_body"
			writeJSON(rec, http.StatusBadRequest, rpcError(nil, mcp.PARSE_ERROR, "could not read request body"))
			return
		}
	}
	if len(body) > MaxBody {
		line.outcome = "too_large"
		writeJSON(rec, http.StatusRequestEntityTooLarge, rpcError(nil, mcp.INVALID_REQUEST, "request body exceeds 1 MiB"))
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))

	var peek rpcPeek
	peekErr := json.Unmarshal(body, &peek)
	var tooDeep *jsonlimit.Error
	if r.Method == http.MethodPost && peekErr != nil && errors.As(jsonlimit.Check(body, maxBodyDepth, 0), &tooDeep) {
		// Deeper than encoding/json reads: no id to answer with, but the limit is named.
		line.outcome = "invalid_params"
		writeJSON(rec, http.StatusBadRequest, rpcError(nil, mcp.INVALID_PARAMS, fmt.Sprintf("invalid params: the request nests deeper than %d levels; a tool's arguments may nest at most %d (request_step's input %d)", maxBodyDepth, catalog.MaxArgumentDepth, step.MaxInputDepth)))
		return
	}
	if r.Method == http.MethodPost && peekErr == nil {
		line.rpc, line.tool = peek.Method, peek.Params.Name
		if !validID(peek.ID) {
			line.outcome = "invalid_request"
			writeJSON(rec, peek.rpcStatus(mcp.INVALID_REQUEST), rpcError(nil, mcp.INVALID_REQUEST, "invalid request: the id must be a string or an integer"))
			return
		}
		if peek.Method == "subscriptions/listen" {
			// Prickle announces no list changes; mcp-go would still answer
			// a listen, so refuse it as an unsupported method.
			line.outcome = "method_not_found"
			writeJSON(rec, peek.rpcStatus(mcp.METHOD_NOT_FOUND), rpcError(peek.ID, mcp.METHOD_NOT_FOUND, "subscriptions/listen is not supported: Prickle's tool list does not change"))
			return
		}
		if peek.Method == string(mcp.MethodToolsCall) {
			line.task = firstNonEmpty(taskIDOf(peek.Params.Arguments), line.task)
			var checked *catalog.Arguments
			if t, ok := catalog.Lookup(peek.Params.Name); ok && headersAgree(r, peek) {
				args, err := t.Check(peek.Params.Arguments)
				if err != nil {
					line.outcome = "invalid_params"
					writeJSON(rec, peek.rpcStatus(mcp.INVALID_PARAMS), rpcError(peek.ID, mcp.INVALID_PARAMS, fmt.Sprintf("invalid params for %s: %v", t.Name, err)))
					return
				}
				if h.cfg.ToolHandler != nil {
					line.route = "handed to " + t.Name
					h.cfg.ToolHandler(t.Name).ServeHTTP(rec, r)
					return
				}
				checked = &args
			}
			if t, ok := h.tools[peek.Params.Name]; ok {
				call := &toolCall{tool: t, caller: caller, checked: checked}
				h.serveCall(rec, r, call)
				if call.outcome != "" {
					line.outcome = call.outcome
				}
				return
			}
		}
	}
	h.servers.of(caller).ServeHTTP(rec, r)
}

func (h *Handler) authenticate(r *http.Request) (identity.Caller, error) {
	scheme, secret, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return identity.Caller{}, identity.ErrUnknownToken
	}
	var c identity.Caller
	var err error
	if h.cfg.OAuth != nil && oauthresource.IsAccessToken(strings.TrimSpace(secret)) {
		c, err = h.cfg.OAuth.Authenticate(r.Context(), secret, h.cfg.Now())
	} else {
		c, err = identity.Authenticate(r.Context(), h.cfg.Tokens, secret, h.cfg.Now())
	}
	if err != nil && !errors.Is(err, identity.ErrUnknownToken) && !errors.Is(err, oauthresource.ErrInsufficientScope) {
		h.cfg.Log.ErrorContext(r.Context(), "token lookup failed", "error", err.Error())
	}
	return c, err
}

// challenge is the WWW-Authenticate value of a 401: with OAuth on, it names
// the protected-resource metadata so clients can discover how to sign in.
func (h *Handler) challenge(tokenSent bool) string {
	if h.cfg.OAuth != nil {
		return h.cfg.OAuth.Challenge(tokenSent)
	}
	c := `Bearer realm="prickle"`
	if tokenSent {
		c += `, error="invalid_token", error_description="unknown, revoked or expired token"`
	}
	return c
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

func rpcError(id json.RawMessage, code int, msg string) map[string]any {
	var idv any = nil
	if len(id) > 0 {
		idv = id
	}
	return map[string]any{"jsonrpc": "2.0", "id": idv, "error": map[string]any{"code": code, "message": msg}}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
