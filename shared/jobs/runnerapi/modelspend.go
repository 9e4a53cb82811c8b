package runnerapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/domain/modelspend"
	"github.com/useprickle/prickle/shared/domain/wakeup"
)

// heldState is what one claim request learnt of the agent's cap: until
// when its wake-ups are held (zero: not held), and whether they were kept
// past their first day already.
type heldState struct {
	until time.Time
	kept  bool
}

// holdUntil is when wake-ups held back by a cap at now may expire: a whole
// retention after the cap lifts at the next UTC day.
func holdUntil(now time.Time) time.Time {
	return modelspend.NextDay(now).Add(wakeup.PendingRetention)
}

// hold says whether the agent is over its cap now; over, its waiting
// wake-ups are kept past their first day (once per request) and the owner
// asked (once a day, by Gate).
func (h *Handler) hold(ctx context.Context, agent string, now time.Time, held *heldState) (bool, error) {
	st, err := h.cfg.Spend.Gate(ctx, agent)
	if err != nil {
		return false, err
	}
	if !st.Over {
		held.until = time.Time{}
		return false, nil
	}
	held.until = modelspend.NextDay(now)
	if !held.kept {
		if _, err := h.cfg.Queue.HoldWakeups(ctx, agent, now, holdUntil(now)); err != nil {
			return true, fmt.Errorf("hold the wake-ups of %s: %w", agent, err)
		}
		held.kept = true
	}
	return true, nil
}

// ended counts the run's usage, if the body reports it, for the run its
// token names, then ends that token: the run is over. A report out of
// bounds is refused with 400 and changes nothing (the token still works).
func (h *Handler) ended(ctx context.Context, w http.ResponseWriter, caller identity.Caller, bearer string, body []byte, line *requestLine) {
	report, ok, err := modelspend.ParseReport(body)
	if err != nil {
		line.outcome = "bad_request"
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if ok {
		recorded, err := h.cfg.Spend.Record(ctx, caller, report)
		if err != nil {
			line.outcome = "error"
			h.cfg.Log.ErrorContext(ctx, "run usage not recorded", "caller", caller.Agent, "task", caller.TaskID, "run", caller.RunID, "error", err.Error())
			writeError(w, http.StatusInternalServerError, "could not record the run's usage; try again")
			return
		}
		h.cfg.Log.InfoContext(ctx, "run usage", "caller", caller.Agent, "task", caller.TaskID, "run", caller.RunID, "recorded", recorded,
			"cost_usd", report.Cost().String(), "input_tokens", report.InputTokens, "output_tokens", report.OutputTokens, "model", report.Model)
	}
	if err := h.cfg.Runs.EndRun(ctx, caller.Agent, caller.TaskID, caller.RunID, identity.Hash(bearer), caller.Agent, ViaRunner); err != nil {
		line.outcome = "error"
		h.cfg.Log.ErrorContext(ctx, "run end failed", "caller", caller.Agent, "task", caller.TaskID, "run", caller.RunID, "error", err.Error())
		writeError(w, http.StatusInternalServerError, "could not end the run's token; try again")
		return
	}
	line.outcome = "ok"
	w.WriteHeader(http.StatusNoContent)
}

// reasons are the wake-up reasons a held run may be put back with.
var reasons = []string{wakeup.ReasonTaskRouted, wakeup.ReasonResultReturned, wakeup.ReasonStepDecided, wakeup.ReasonResultRefused}

type startRequest struct {
	Reason string `json:"reason"`
}

// ViaHeld is how the audit trail names a run token ended because its run
// was held back by its agent's cap.
const ViaHeld = ViaRunner + ": held by the daily model-spend cap"

// start answers a runner about to start a run a webhook delivered: 204
// when the agent is under its cap; over it, the run's wake-up goes back to
// the pull queue (the same task, reason and run it resumes; held past its
// first day), its run token ends, and 409 says until when it waits. The
// runner claims it from there once the cap allows, with a new run token.
func (h *Handler) start(ctx context.Context, w http.ResponseWriter, caller identity.Caller, bearer string, body []byte, line *requestLine) {
	var req startRequest
	if err := json.Unmarshal(body, &req); err != nil || !slices.Contains(reasons, req.Reason) {
		line.outcome = "bad_request"
		writeError(w, http.StatusBadRequest, fmt.Sprintf(`body must be JSON {"reason": one of %v}: the wake-up's reason`, reasons))
		return
	}
	now := h.cfg.Now().UTC()
	// kept: putBack keeps the agent's wake-ups past their day once the held one is stored.
	over, err := h.hold(ctx, caller.Agent, now, &heldState{kept: true})
	if err == nil && over {
		err = h.putBack(ctx, caller, bearer, req.Reason, now)
	}
	if err != nil {
		line.outcome = "error"
		h.cfg.Log.ErrorContext(ctx, "run start check failed", "caller", caller.Agent, "task", caller.TaskID, "run", caller.RunID, "error", err.Error())
		writeError(w, http.StatusInternalServerError, "could not check the agent's model-spend cap; try again")
		return
	}
	if over {
		line.outcome = "held"
		writeJSON(w, http.StatusConflict, map[string]string{
			"error":      fmt.Sprintf("%s reached its daily model-spend cap: the run does not start; its wake-up waits in Prickle (claimed with the agent token) until the owner raises the cap or the next UTC day", caller.Agent),
			"held_until": modelspend.NextDay(now).Format(time.RFC3339), "wakeup": heldID(caller),
		})
		return
	}
	line.outcome = "ok"
	w.WriteHeader(http.StatusNoContent)
}

// heldID is the id of the wake-up a held run is put back as: the run's
// own, made of its run id and when its token was minted, never of the
// time of the request. Racing starts of one run, or a runner's retry after
// a lost answer, store the one wake-up (a put of an existing id changes
// nothing), so a held run comes back as one run.
func heldID(caller identity.Caller) string {
	began := caller.Issued
	if began.IsZero() {
		began = time.UnixMilli(0)
	}
	return wakeup.PendingID("held:"+caller.RunID, caller.Agent, began)
}

// putBack stores the held run's wake-up for pull, keeps it past its first
// day and ends the run's token. Each step is idempotent for the run: a
// failure before the token ends leaves it working, and the runner's retry
// stores nothing twice.
func (h *Handler) putBack(ctx context.Context, caller identity.Caller, bearer, reason string, now time.Time) error {
	p := wakeup.Pending{ID: heldID(caller), Agent: caller.Agent, TaskID: caller.TaskID, Reason: reason,
		ResumesRun: caller.ResumesRun, EventID: "held:" + caller.RunID, CreatedAt: now}
	if err := h.cfg.Queue.PutPendingWakeup(ctx, p); err != nil {
		return fmt.Errorf("put back the wake-up of run %s: %w", caller.RunID, err)
	}
	if _, err := h.cfg.Queue.HoldWakeups(ctx, caller.Agent, now, holdUntil(now)); err != nil {
		return fmt.Errorf("hold the wake-up of run %s: %w", caller.RunID, err)
	}
	if err := h.cfg.Runs.EndRun(ctx, caller.Agent, caller.TaskID, caller.RunID, identity.Hash(bearer), caller.Agent, ViaHeld); err != nil {
		return fmt.Errorf("end held run %s: %w", caller.RunID, err)
	}
	h.cfg.Log.InfoContext(ctx, "run held by the model-spend cap; its wake-up waits for pull", "caller", caller.Agent, "task", caller.TaskID, "run", caller.RunID, "wakeup", p.ID)
	return nil
}
