package runnerapi

// POST /runner/ack and POST /runner/extend: a claimed wake-up is marked
// done, or kept hidden while its run waits or runs.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/domain/wakeup"
	"github.com/useprickle/prickle/shared/team"
)

type settleRequest struct {
	ID    string `json:"id"`
	Claim string `json:"claim"`
}

// settle acknowledges (AckPath) or extends (ExtendPath) a claimed wake-up.
func (h *Handler) settle(ctx context.Context, w http.ResponseWriter, path string, caller identity.Caller, body []byte, line *requestLine) {
	var req settleRequest
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
	now := h.cfg.Now().UTC()
	until := now.Add(h.cfg.Visibility)
	var err error
	if path == ExtendPath {
		err = h.cfg.Queue.ExtendWakeup(ctx, caller.Agent, req.ID, wakeup.ClaimHash(req.Claim), until)
	} else {
		err = h.cfg.Queue.AckWakeup(ctx, caller.Agent, req.ID, wakeup.ClaimHash(req.Claim), now)
	}
	switch {
	case errors.Is(err, team.ErrNotFound):
		line.outcome = "not_found"
		writeError(w, http.StatusNotFound, "no wake-up "+req.ID+" for "+caller.Agent)
	case errors.Is(err, wakeup.ErrStaleClaim):
		line.outcome = "stale_claim"
		writeError(w, http.StatusConflict, "wake-up "+req.ID+" was not "+map[string]string{AckPath: "acknowledged", ExtendPath: "extended"}[path]+
			": that claim receipt is wrong, superseded by a later claim (after the visibility timeout), or already acknowledged")
	case err != nil:
		line.outcome = "error"
		h.cfg.Log.ErrorContext(ctx, "runner request failed", "path", path, "caller", caller.Agent, "wakeup", req.ID, "error", err.Error())
		writeError(w, http.StatusInternalServerError, "could not record it; try again")
	case path == ExtendPath:
		line.outcome = "ok"
		writeJSON(w, http.StatusOK, map[string]string{"visible_until": until.Format(time.RFC3339)})
	default:
		line.outcome = "ok"
		w.WriteHeader(http.StatusNoContent)
	}
}
