// Package runnerapi is the runner API: what prickle-runner calls on Prickle.
// Pull-mode wake-ups for runners on machines no webhook reaches: POST /runner/claim (a long poll) hands an agent's stored wake-ups
// to exactly one claimer each, minting each one's run token as it is
// claimed; POST /runner/extend keeps a claimed one hidden while its run
// waits or runs, and POST /runner/ack marks one done once its run ended by
// itself. One not acknowledged comes back after the visibility timeout with
// a new receipt and a new run token, and the earlier claim's token ends.
// POST /runner/ended, with a run token, ends that token: the run is over;
// its optional body is the run's model usage, counted once for that run.
// An agent over its owner's daily model-spend cap gets no wake-up from a
// claim (they wait, held past their first day); POST /runner/start, with a
// run token a webhook delivered, asks whether that run may start, and over
// the cap puts its wake-up back in the pull queue to wait likewise.
// POST /runner/project, with a run token, reads the project's file-claim
// settings (project.go).
package runnerapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/domain/audit"
	"github.com/useprickle/prickle/shared/domain/modelspend"
	"github.com/useprickle/prickle/shared/domain/wakeup"
	wakeupjob "github.com/useprickle/prickle/shared/jobs/wakeup"
	"github.com/useprickle/prickle/shared/kit/httprec"
	"github.com/useprickle/prickle/shared/kit/wait"
)

// Paths of the endpoints.
const (
	ClaimPath  = "/runner/claim"
	AckPath    = "/runner/ack"
	ExtendPath = "/runner/extend"
	EndedPath  = "/runner/ended"
	StartPath  = "/runner/start"
)

// Bounds of a claim request.
const (
	MaxWait        = 25 // seconds: within API Gateway's 29-second limit
	DefaultWait    = 20
	MaxClaim       = 10
	DefaultClaim   = 1
	maxRequestBody = 4 << 10
)

// Queue is where the wake-ups wait; the store is one.
type Queue interface {
	ClaimableWakeups(ctx context.Context, agent string, now time.Time, limit int) ([]wakeup.Pending, error)
	ClaimWakeup(ctx context.Context, agent, id, claimHash string, now, until time.Time) (bool, wakeup.RunRef, error)
	// HoldWakeups keeps the agent's waiting wake-ups until at least until.
	HoldWakeups(ctx context.Context, agent string, now, until time.Time) (int, error)
	PutPendingWakeup(ctx context.Context, p wakeup.Pending) error
	SetWakeupRun(ctx context.Context, agent, id, claimHash string, run wakeup.RunRef) error
	ExtendWakeup(ctx context.Context, agent, id, claimHash string, until time.Time) error
	AckWakeup(ctx context.Context, agent, id, claimHash string, now time.Time) error
}

// Runs starts a claimed wake-up's run and ends a run's token; *mint.Tokens is one.
type Runs interface {
	wakeupjob.RunStarter
	EndRun(ctx context.Context, agentID, taskID, runID, hash, actor, via string) error
}

// Spend counts runs' reported usage and says whether an agent may start a
// new run under its owner's daily cap; *team.ModelSpend is one.
type Spend interface {
	Record(ctx context.Context, run identity.Caller, r modelspend.Report) (bool, error)
	Gate(ctx context.Context, agent string) (modelspend.Status, error)
}

// ViaRunner is how the audit trail names a runner's report that its run ended.
const ViaRunner = audit.ViaRunner

// Config is what the endpoints need; zero Visibility, Poll, Now and Sleep take defaults.
type Config struct {
	Tokens identity.TokenLookup
	Queue  Queue
	Runs   Runs
	Spend  Spend
	// Settings answers ProjectPath; *team.Service is one.
	Settings Settings
	Log      *slog.Logger
	// Visibility is how long a claimed wake-up is hidden from other claims
	// (wakeup.DefaultVisibility unless set, e.g. from PRICKLE_WAKE_VISIBILITY_SECONDS).
	Visibility time.Duration
	// Poll is how often a waiting claim looks again (default 1 s).
	Poll  time.Duration
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
}

// Handler serves ClaimPath, ExtendPath, AckPath and EndedPath.
type Handler struct{ cfg Config }

// New builds the handler, filling in defaults.
func New(cfg Config) *Handler {
	if cfg.Visibility <= 0 {
		cfg.Visibility = wakeup.DefaultVisibility
	}
	if cfg.Poll <= 0 {
		cfg.Poll = time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Sleep == nil {
		cfg.Sleep = wait.For
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	return &Handler{cfg: cfg}
}

// Wakeup is one claimed wake-up as a runner gets it; Delivery is exactly
// the wake webhook's body.
type Wakeup struct {
	ID           string         `json:"id"`
	Claim        string         `json:"claim"`
	VisibleUntil string         `json:"visible_until"`
	Delivery     wakeup.Payload `json:"delivery"`
}

// requestLine is what the one log line of a request says.
type requestLine struct {
	caller, outcome string
	claimed         int
}

// ServeHTTP authenticates the agent token, bounds the body, and claims or acknowledges.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	line := &requestLine{}
	rec := httprec.New(w)
	defer func() {
		h.cfg.Log.InfoContext(r.Context(), "runner request", "path", r.URL.Path, "http_method", r.Method,
			"caller", line.caller, "status", rec.Status, "outcome", line.outcome, "claimed", line.claimed,
			"latency_ms", float64(time.Since(start).Microseconds())/1000)
	}()
	rec.Header().Set("Cache-Control", "no-store")
	path := strings.TrimSuffix(r.URL.Path, "/")
	if path != ClaimPath && path != AckPath && path != ExtendPath && path != EndedPath && path != StartPath && path != ProjectPath {
		line.outcome = "not_found"
		writeError(rec, http.StatusNotFound, "no such endpoint: POST "+ClaimPath+", "+ExtendPath+", "+AckPath+", "+StartPath+", "+EndedPath+" or "+ProjectPath)
		return
	}
	if r.Method != http.MethodPost {
		line.outcome = "method_not_allowed"
		rec.Header().Set("Allow", http.MethodPost)
		writeError(rec, http.StatusMethodNotAllowed, path+" takes POST")
		return
	}
	caller, bearer, err := h.authenticate(r, path == EndedPath || path == StartPath || path == ProjectPath)
	if err != nil {
		line.outcome = "unauthorized"
		rec.Header().Set("WWW-Authenticate", `Bearer realm="prickle"`)
		writeError(rec, http.StatusUnauthorized, err.Error())
		return
	}
	line.caller = caller.Agent
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBody+1))
	if err != nil {
		line.outcome = "bad_body"
		writeError(rec, http.StatusBadRequest, "could not read the request body")
		return
	}
	if len(body) > maxRequestBody {
		line.outcome = "too_large"
		writeError(rec, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body exceeds %d bytes", maxRequestBody))
		return
	}
	switch path {
	case ClaimPath:
		h.claim(r.Context(), rec, caller, body, line)
	case EndedPath:
		h.ended(r.Context(), rec, caller, bearer, body, line)
	case StartPath:
		h.start(r.Context(), rec, caller, bearer, body, line)
	case ProjectPath:
		h.project(r.Context(), rec, caller, body, line)
	default:
		h.settle(r.Context(), rec, path, caller, body, line)
	}
}

// authenticate accepts an agent token for the wake-ups (a run token is
// bound to one task and must not see the agent's other wake-ups), and a run
// token only for EndedPath and StartPath (which concern that run alone)
// and ProjectPath (what the run's hook reads).
func (h *Handler) authenticate(r *http.Request, run bool) (identity.Caller, string, error) {
	refusal := "unauthorized: send Authorization: Bearer <your Prickle agent token>"
	if run {
		refusal = "unauthorized: send Authorization: Bearer <the run's token>"
	}
	bearer, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || len(bearer) > 256 {
		return identity.Caller{}, "", errors.New(refusal)
	}
	caller, err := identity.Authenticate(r.Context(), h.cfg.Tokens, bearer, h.cfg.Now())
	if err != nil {
		return identity.Caller{}, "", errors.New(refusal + " (unknown, revoked or expired token)")
	}
	switch {
	case run && caller.Kind != identity.KindRun:
		return identity.Caller{}, "", errors.New("unauthorized: " + EndedPath + ", " + StartPath + " and " + ProjectPath + " concern one run and take that run's token, not an agent token")
	case !run && caller.Kind != identity.KindAgent:
		return identity.Caller{}, "", errors.New("unauthorized: wake-ups are claimed with the agent's token, not a run token")
	}
	return caller, bearer, nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}
