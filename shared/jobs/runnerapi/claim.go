package runnerapi

// POST /runner/claim: a long poll that hands each stored wake-up to
// exactly one claimer and mints its run token.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/domain/audit"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/domain/wakeup"
	"github.com/useprickle/prickle/shared/team/mint"
)

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
	var held heldState
	for {
		var err error
		got, err = h.claimOnce(ctx, caller.Agent, limit, &held)
		if err != nil && ctx.Err() != nil {
			// The runner went away (stopped, killed) during its long poll: nobody
			// waits for an answer, and what it claimed comes back after the
			// visibility timeout. Not a failure of Prickle's.
			line.outcome = "cancelled"
			return
		}
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
	answer := map[string]any{"wakeups": got}
	if len(got) == 0 && !held.until.IsZero() {
		line.outcome, answer["held_until"] = "held", held.until.Format(time.RFC3339)
	}
	writeJSON(w, http.StatusOK, answer)
}

// claimOnce takes up to limit claimable wake-ups, each with one conditional
// write, and mints each one's run token. A wake-up whose task closed is
// marked done; one whose token could not be minted comes back after the
// visibility timeout. While the agent is over its cap none is taken (held
// says until when).
func (h *Handler) claimOnce(ctx context.Context, agent string, limit int, held *heldState) ([]Wakeup, error) {
	now := h.cfg.Now().UTC()
	candidates, err := h.cfg.Queue.ClaimableWakeups(ctx, agent, now, limit)
	if err != nil {
		return nil, err
	}
	got := []Wakeup{}
	if len(candidates) > 0 {
		if over, err := h.hold(ctx, agent, now, held); err != nil || over {
			return got, err
		}
	}
	for _, p := range candidates {
		claim, err := wakeup.NewClaim()
		if err != nil {
			return got, err
		}
		until := now.Add(h.cfg.Visibility)
		won, prev, err := h.cfg.Queue.ClaimWakeup(ctx, agent, p.ID, wakeup.ClaimHash(claim), now, until)
		if err != nil {
			return got, err
		}
		if !won {
			continue
		}
		if prev.TokenHash != "" {
			// Claimed again: the earlier claim's run is over (its runner died or stopped).
			if err := h.cfg.Runs.EndRun(ctx, agent, p.TaskID, prev.ID, prev.TokenHash, task.System, audit.ViaWakeup(p.ID)+" claimed again"); err != nil {
				return got, fmt.Errorf("end the earlier run of wake-up %s: %w", p.ID, err)
			}
		}
		run, err := h.cfg.Runs.StartRun(ctx, mint.ByClaim(p.ID, agent, p.Reason), agent, p.TaskID, p.ResumesRun)
		if errors.Is(err, mint.ErrNoRun) {
			h.cfg.Log.InfoContext(ctx, "wake-up has no run to start; done", "caller", agent, "wakeup", p.ID, "why", err.Error())
			if err := h.cfg.Queue.AckWakeup(ctx, agent, p.ID, wakeup.ClaimHash(claim), now); err != nil {
				return got, err
			}
			continue
		}
		if err != nil {
			return got, fmt.Errorf("start run for wake-up %s: %w", p.ID, err)
		}
		ref := wakeup.RunRef{ID: run.RunID, TokenHash: identity.Hash(run.RunToken)}
		if err := h.cfg.Queue.SetWakeupRun(ctx, agent, p.ID, wakeup.ClaimHash(claim), ref); err != nil {
			return got, fmt.Errorf("record run of wake-up %s: %w", p.ID, err)
		}
		got = append(got, Wakeup{
			ID: p.ID, Claim: claim, VisibleUntil: until.Format(time.RFC3339),
			Delivery: wakeup.Payload{TaskID: p.TaskID, RunID: run.RunID, RunToken: run.RunToken, Reason: p.Reason, ResumesRun: p.ResumesRun},
		})
	}
	return got, nil
}
