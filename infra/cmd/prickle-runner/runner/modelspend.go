package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/useprickle/prickle/shared/kit/wait"
)

// Model spend: a run's usage goes to Prickle with its end (EndRun), and a
// run a webhook delivered asks first whether its agent is under its owner's
// daily model-spend cap (MayStart). Over it, Prickle keeps the wake-up in its
// pull queue, and the runner claims it from there once the cap allows (Drain).

// StartPath is where a runner asks whether a delivered run may start.
const StartPath = "/runner/start"

// ErrUsageRefused means Prickle refused a run's usage report (400): the run
// token was ended without it, and the run's spend is not counted.
var ErrUsageRefused = errors.New("the run's usage report was refused by Prickle; the run token was ended without it")

// mainModel is the model that cost the run most (Claude Code also uses a
// small model for titles), or the only one.
func (r ClaudeResult) mainModel() string {
	best, cost := "", -1.0
	for name, u := range r.ModelUsage {
		if u.CostUSD > cost || (u.CostUSD == cost && name < best) {
			best, cost = name, u.CostUSD
		}
	}
	return best
}

// MayStart asks POST /runner/start with the run's token. 204: start; 409:
// held, with until when. A Prickle without the endpoint (404), or a token
// that no longer works (401), starts the run as before, except when the
// 401 answers a retry: an earlier attempt whose answer was lost held the
// run and ended its token (or the token ended since), so the run is held,
// until when unknown (zero), and it comes back as that held wake-up, once.
func (m *MCPTasks) MayStart(ctx context.Context, runToken, reason string) (bool, time.Time, error) {
	body, _ := json.Marshal(map[string]string{"reason": reason})
	code, answer, retried, err := m.runPost(ctx, StartPath, runToken, body)
	if err != nil {
		return false, time.Time{}, fmt.Errorf("may start: %w", err)
	}
	if code == http.StatusUnauthorized && retried {
		return true, time.Time{}, nil
	}
	switch code {
	case http.StatusNoContent, http.StatusOK, http.StatusNotFound, http.StatusUnauthorized:
		return false, time.Time{}, nil
	case http.StatusConflict:
		var a struct {
			HeldUntil time.Time `json:"held_until"`
		}
		if err := json.Unmarshal(answer, &a); err != nil {
			return false, time.Time{}, fmt.Errorf("may start: the answer says no held_until: %s", clip(string(answer), 200))
		}
		return true, a.HeldUntil, nil
	}
	return false, time.Time{}, fmt.Errorf("may start: HTTP %d: %s", code, clip(string(answer), 200))
}

// endRunProblem names what went wrong with a run's end for its log line.
func endRunProblem(err error) string {
	if errors.Is(err, ErrUsageRefused) {
		return "run usage not counted"
	}
	return "run token not ended"
}

// held asks Prickle, for a run a webhook delivered (a claim was checked by
// Prickle already), whether it may start under its agent's cap. Held, the
// delivery is finished here (Prickle keeps its wake-up) and the drain is
// woken to claim it back once the cap allows. A check that fails lets the
// run start: a cap stops new runs, it is not a reason to lose one.
func (r *Runner) held(ctx context.Context, d *delivery) bool {
	if d.via == ViaPull {
		return false
	}
	held, until, err := r.Tasks.MayStart(ctx, d.w.RunToken, d.w.Reason)
	if err != nil {
		r.Out.Warn("model-spend cap not checked; the run starts", "task", d.w.TaskID, "run", d.w.RunID, "error", err.Error())
		return false
	}
	if !held {
		return false
	}
	if until.IsZero() {
		r.Out.Info("run held: an earlier attempt of its start check, whose answer was lost, ended its token; the wake-up waits in Prickle",
			"task", d.w.TaskID, "run", d.w.RunID)
	} else {
		r.Out.Info("run held: its agent reached its daily model-spend cap; the wake-up waits in Prickle", "task", d.w.TaskID, "run", d.w.RunID,
			"until", until.Format(time.RFC3339))
	}
	r.finish(d)
	if r.OnHeld != nil {
		r.OnHeld()
	}
	return true
}

// ViaPull is how a claimed wake-up is offered.
const ViaPull = "pull"

// Drain claims, in webhook mode, what Prickle keeps for the agent in its
// pull queue (runs held by the cap): once at start, so a runner started
// again finds what waits, then each time wake says a run was held, until a
// claim finds nothing waiting and nothing held. It returns when ctx ends.
func (p *Puller) Drain(ctx context.Context, wake <-chan struct{}) {
	for {
		p.drainOnce(ctx)
		select {
		case <-ctx.Done():
			return
		case <-wake:
		}
	}
}

func (p *Puller) drainOnce(ctx context.Context) {
	waitSeconds := 0 // the first look does not wait: most of the time nothing is held
	for ctx.Err() == nil {
		free := min(p.Runner.Free(), 10)
		if free < 1 {
			if wait.For(ctx, p.idle()) != nil {
				return
			}
			continue
		}
		a, err := p.claim(ctx, free, waitSeconds)
		switch {
		case ctx.Err() != nil:
			return
		case errors.Is(err, ErrUnauthorized), errors.Is(err, ErrNoPull):
			p.Log.Warn("held wake-ups cannot be claimed", "error", err.Error())
			return
		case err != nil:
			minB, _ := p.backoffs()
			p.Log.Warn("claim of held wake-ups failed; retrying", "error", err.Error(), "in", minB.String())
			if wait.For(ctx, minB) != nil {
				return
			}
			continue
		}
		for _, c := range a.Wakeups {
			p.Runner.Offer(c.ID, c.Delivery, ViaPull, p.receipt(c))
		}
		if len(a.Wakeups) == 0 && a.HeldUntil == "" {
			return
		}
		if a.HeldUntil != "" && waitSeconds == 0 {
			p.Log.Info("wake-ups held by the daily model-spend cap: claiming them once it allows", "until", a.HeldUntil)
		}
		waitSeconds = p.WaitSeconds
	}
}
