// Package pull serves pull-mode wake-ups to runners on machines no webhook
// reaches: POST /runner/claim (a long poll) hands an agent's stored wake-ups
// to exactly one claimer each, minting each one's run token as it is
// claimed, and POST /runner/ack marks one done. One not acknowledged comes
// back after the visibility timeout with a new receipt and a new run token.
package pull

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

	"github.com/useprickle/prickle/shared/admin"
	"github.com/useprickle/prickle/shared/httprec"
	"github.com/useprickle/prickle/shared/identity"
	"github.com/useprickle/prickle/shared/pause"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/wake"
	"github.com/useprickle/prickle/shared/wakeup"
)

// Paths of the two endpoints.
const (
	ClaimPath = "/runner/claim"
	AckPath   = "/runner/ack"
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
	ClaimWakeup(ctx context.Context, agent, id, claimHash string, now, until time.Time) (bool, error)
	AckWakeup(ctx context.Context, agent, id, claimHash string, now time.Time) error
}

// Config is what the endpoints need; zero Visibility, Poll, Now and Sleep take defaults.
type Config struct {
	Tokens identity.TokenLookup
	Queue  Queue
	Runs   wake.RunStarter
	Log    *slog.Logger
	// Visibility is how long a claimed wake-up is hidden from other claims
	// (wakeup.DefaultVisibility unless set, e.g. from PRICKLE_WAKE_VISIBILITY_SECONDS).
	Visibility time.Duration
	// Poll is how often a waiting claim looks again (default 1 s).
	Poll  time.Duration
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
}

// Handler serves ClaimPath and AckPath.
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
		cfg.Sleep = pause.For
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	return &Handler{cfg: cfg}
}

// Wakeup is one claimed wake-up as a runner gets it; Delivery is exactly
// the wake webhook's body.
type Wakeup struct {
	ID           string       `json:"id"`
	Claim        string       `json:"claim"`
	VisibleUntil string       `json:"visible_until"`
	Delivery     wake.Payload `json:"delivery"`
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
	if path != ClaimPath && path != AckPath {
		line.outcome = "not_found"
		writeError(rec, http.StatusNotFound, "no such endpoint: POST "+ClaimPath+" or "+AckPath)
		return
	}
	if r.Method != http.MethodPost {
		line.outcome = "method_not_allowed"
		rec.Header().Set("Allow", http.MethodPost)
		writeError(rec, http.StatusMethodNotAllowed, path+" takes POST")
		return
	}
	caller, err := h.authenticate(r)
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
	if path == ClaimPath {
		h.claim(r.Context(), rec, caller, body, line)
		return
	}
	h.ack(r.Context(), rec, caller, body, line)
}

// authenticate accepts an agent token only: a run token is bound to one
// task and must not see the agent's other wake-ups.
func (h *Handler) authenticate(r *http.Request) (identity.Caller, error) {
	const refusal = "unauthorized: send Authorization: Bearer <your Prickle agent token>"
	bearer, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || len(bearer) > 256 {
		return identity.Caller{}, errors.New(refusal)
	}
	caller, err := identity.Authenticate(r.Context(), h.cfg.Tokens, bearer, h.cfg.Now())
	if err != nil {
		return identity.Caller{}, errors.New(refusal + " (unknown, revoked or expired token)")
	}
	if caller.Kind != identity.KindAgent {
		return identity.Caller{}, errors.New("unauthorized: wake-ups are claimed with the agent's token, not a run token")
	}
	return caller, nil
}

type claimRequest struct {
	WaitSeconds *int `json:"wait_seconds"`
	Max         *int `json:"max"`
}

func (h *Handler) claim(ctx context.Context, w http.ResponseWriter, caller identity.Caller, body []byte, line *requestLine) {
	var req claimRequest
	if len(strings.TrimSpace(string(body))) > 0 {
		if err := json.Unmarshal(body, &req); err != nil {
			line.outcome = "bad_request"
			writeError(w, http.StatusBadRequest, `body must be JSON {"wait_seconds": 0..25, "max": 1..10}: `+err.Error())
			return
		}
	}
	wait, limit := DefaultWait, DefaultClaim
	if req.WaitSeconds != nil {
		wait = *req.WaitSeconds
	}
	if req.Max != nil {
		limit = *req.Max
	}
	if wait < 0 || wait > MaxWait {
		line.outcome = "bad_request"
		writeError(w, http.StatusBadRequest, fmt.Sprintf("wait_seconds must be 0..%d, got %d", MaxWait, wait))
		return
	}
	if limit < 1 || limit > MaxClaim {
		line.outcome = "bad_request"
		writeError(w, http.StatusBadRequest, fmt.Sprintf("max must be 1..%d, got %d", MaxClaim, limit))
		return
	}
	deadline := h.cfg.Now().Add(time.Duration(wait) * time.Second)
	var got []Wakeup
	for {
		var err error
		got, err = h.claimOnce(ctx, caller.Agent, limit)
		if err != nil {
			line.outcome = "error"
			h.cfg.Log.ErrorContext(ctx, "runner claim failed", "caller", caller.Agent, "error", err.Error())
			writeError(w, http.StatusInternalServerError, "could not claim wake-ups; try again")
			return
		}
		left := deadline.Sub(h.cfg.Now())
		if len(got) > 0 || left <= 0 {
			break
		}
		if err := h.cfg.Sleep(ctx, min(h.cfg.Poll, left)); err != nil {
			line.outcome = "cancelled"
			return
		}
	}
	line.outcome, line.claimed = "ok", len(got)
	writeJSON(w, http.StatusOK, map[string]any{"wakeups": got})
}

// claimOnce takes up to limit claimable wake-ups, each with one conditional
// write, and mints each one's run token. A wake-up whose task closed is
// marked done; one whose token could not be minted comes back after the
// visibility timeout.
func (h *Handler) claimOnce(ctx context.Context, agent string, limit int) ([]Wakeup, error) {
	now := h.cfg.Now().UTC()
	candidates, err := h.cfg.Queue.ClaimableWakeups(ctx, agent, now, limit)
	if err != nil {
		return nil, err
	}
	got := []Wakeup{}
	for _, p := range candidates {
		claim, err := wakeup.NewClaim()
		if err != nil {
			return got, err
		}
		until := now.Add(h.cfg.Visibility)
		won, err := h.cfg.Queue.ClaimWakeup(ctx, agent, p.ID, wakeup.ClaimHash(claim), now, until)
		if err != nil {
			return got, err
		}
		if !won {
			continue
		}
		run, err := h.cfg.Runs.StartRun(ctx, admin.ByClaim(p.ID, agent, p.Reason), agent, p.TaskID, p.ResumesRun)
		if errors.Is(err, admin.ErrNoRun) {
			h.cfg.Log.InfoContext(ctx, "wake-up has no run to start; done", "caller", agent, "wakeup", p.ID, "why", err.Error())
			if err := h.cfg.Queue.AckWakeup(ctx, agent, p.ID, wakeup.ClaimHash(claim), now); err != nil {
				return got, err
			}
			continue
		}
		if err != nil {
			return got, fmt.Errorf("start run for wake-up %s: %w", p.ID, err)
		}
		got = append(got, Wakeup{
			ID: p.ID, Claim: claim, VisibleUntil: until.Format(time.RFC3339),
			Delivery: wake.Payload{TaskID: p.TaskID, RunID: run.RunID, RunToken: run.RunToken, Reason: p.Reason, ResumesRun: p.ResumesRun},
		})
	}
	return got, nil
}

type ackRequest struct {
	ID    string `json:"id"`
	Claim string `json:"claim"`
}

func (h *Handler) ack(ctx context.Context, w http.ResponseWriter, caller identity.Caller, body []byte, line *requestLine) {
	var req ackRequest
	if err := json.Unmarshal(body, &req); err != nil {
		line.outcome = "bad_request"
		writeError(w, http.StatusBadRequest, `body must be JSON {"id": "...", "claim": "..."}`)
		return
	}
	if !wakeup.ValidPendingID(req.ID) {
		line.outcome = "bad_request"
		writeError(w, http.StatusBadRequest, "id must be a wake-up id as the claim gave it (wk_<13 digits>_<16 hex>)")
		return
	}
	if req.Claim == "" || len(req.Claim) > wakeup.MaxClaimLength {
		line.outcome = "bad_request"
		writeError(w, http.StatusBadRequest, fmt.Sprintf("claim must be the receipt the claim gave (1..%d characters)", wakeup.MaxClaimLength))
		return
	}
	err := h.cfg.Queue.AckWakeup(ctx, caller.Agent, req.ID, wakeup.ClaimHash(req.Claim), h.cfg.Now().UTC())
	switch {
	case errors.Is(err, team.ErrNotFound):
		line.outcome = "not_found"
		writeError(w, http.StatusNotFound, "no wake-up "+req.ID+" for "+caller.Agent)
	case errors.Is(err, wakeup.ErrStaleClaim):
		line.outcome = "stale_claim"
		writeError(w, http.StatusConflict, "wake-up "+req.ID+" was not acknowledged: that claim receipt is wrong, or superseded by a later claim (after the visibility timeout)")
	case err != nil:
		line.outcome = "error"
		h.cfg.Log.ErrorContext(ctx, "runner ack failed", "caller", caller.Agent, "wakeup", req.ID, "error", err.Error())
		writeError(w, http.StatusInternalServerError, "could not acknowledge; try again")
	default:
		line.outcome = "ok"
		w.WriteHeader(http.StatusNoContent)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}
