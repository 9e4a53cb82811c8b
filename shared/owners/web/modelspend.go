package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/useprickle/prickle/shared/auth/session"
	"github.com/useprickle/prickle/shared/domain/audit"
	"github.com/useprickle/prickle/shared/domain/budget"
	"github.com/useprickle/prickle/shared/domain/modelspend"
	"github.com/useprickle/prickle/shared/team"
)

// Model spend on the pages: each run's cost on the task page, each agent's
// spend today and this month on Team Pulse and the owners page, and there
// the daily cap an owner sets for their own agents (POST /p/{project}/caps).

var errNoSpend = errors.New("web: no model spend configured")

// lacksSpend is errNoSpend when the handler has no model spend, else nil.
func (h *Handler) lacksSpend() error {
	if h.cfg.Spend == nil {
		return errNoSpend
	}
	return nil
}

// runView is one run's reported use, as the task page lists it.
type runView struct {
	RunID, Agent, Model, Cost, At, Duration string
	InputTokens, OutputTokens, Turns        int64
}

// runsView is the task's runs and what they cost together.
type runsView struct {
	Runs  []runView
	Total string
}

func (h *Handler) runsOf(ctx context.Context, taskID string) (runsView, error) {
	runs, err := h.cfg.Store.TaskRuns(ctx, taskID)
	if err != nil {
		return runsView{}, err
	}
	var total budget.Micros
	v := runsView{}
	for _, r := range runs {
		total += r.Cost
		v.Runs = append(v.Runs, runView{RunID: r.RunID, Agent: r.Agent, Model: orDash(r.Model), Cost: r.Cost.String(), At: stamp(r.At),
			Duration: (time.Duration(r.DurationMS) * time.Millisecond).Round(time.Second).String(), InputTokens: r.InputTokens, OutputTokens: r.OutputTokens, Turns: r.Turns})
	}
	v.Total = total.String()
	return v, nil
}

// spendLine is an agent's model spend as Team Pulse shows it.
type spendLine struct {
	Today, Month string
	Runs         int64
}

// agentsSpend reads the agents' caps, days and months now.
func (h *Handler) agentsSpend(ctx context.Context, agents []team.Agent) ([]modelspend.AgentSpend, error) {
	ids := make([]string, len(agents))
	for i, a := range agents {
		ids[i] = a.ID
	}
	now := h.now()
	return h.cfg.Store.AgentsSpend(ctx, ids, modelspend.Day(now), modelspend.Month(now))
}

// pulseSpend is each agent's spend line, by agent id.
func (h *Handler) pulseSpend(ctx context.Context, agents []team.Agent) (map[string]spendLine, error) {
	spend, err := h.agentsSpend(ctx, agents)
	if err != nil {
		return nil, err
	}
	out := make(map[string]spendLine, len(spend))
	for _, a := range spend {
		out[a.Agent] = spendLine{Today: a.Today.Cost.String(), Month: a.Month.Cost.String(), Runs: a.Today.Runs}
	}
	return out, nil
}

// agentSpendView is one agent's row of the owners page's model spend.
type agentSpendView struct {
	Agent, Today, Month, Cap, Limit, Status string
	Runs                                    int64
	Over, Mine                              bool
}

func viewAgentSpend(a modelspend.AgentSpend, me string) agentSpendView {
	st := a.Status()
	v := agentSpendView{Agent: a.Agent, Today: a.Today.Cost.String(), Month: a.Month.Cost.String(), Runs: a.Today.Runs, Cap: "none", Limit: "—",
		Over: st.Over, Mine: ownerOf(a.Agent) == me, Status: "no cap"}
	if !st.Capped {
		return v
	}
	v.Cap, v.Limit = st.Cap.PerDay.String(), st.Limit.String()
	switch {
	case st.Over && st.Day.Decision == modelspend.Left:
		v.Status = fmt.Sprintf("cap reached; left by %s: new runs wait until 00:00 UTC", st.Day.DecidedBy)
	case st.Over:
		v.Status = "cap reached: new runs wait until the cap is raised or 00:00 UTC"
	case st.Day.Decision == modelspend.Raised:
		v.Status = fmt.Sprintf("raised for today by %s; %s left", st.Day.DecidedBy, st.Limit-st.Day.Cost)
	default:
		v.Status = fmt.Sprintf("%s left today", st.Limit-st.Day.Cost)
	}
	return v
}

// setCap is POST /p/{project}/caps: the signed-in owner's daily cap for
// one of their agents in the project (cap empty: none).
func (h *Handler) setCap(w http.ResponseWriter, r *http.Request) {
	me, p, ok := h.projectPost(w, r, h.lacksSpend())
	if !ok {
		return
	}
	var perDay budget.Micros
	if v := strings.TrimSpace(r.PostForm.Get("cap")); v != "" {
		var err error
		if perDay, err = modelspend.ParseCap(v); err != nil {
			h.ownersRefused(w, r, me, p, err.Error())
			return
		}
	}
	err := h.cfg.Spend.SetCap(r.Context(), me.Owner, p.Slug, r.PostForm.Get("agent"), perDay, decidedVia(audit.ViaOwners, me))
	h.ownersChanged(w, r, me, p, err, "cap_set", "owners?done=cap")
}

// ownersSpendOf is the owners page's model spend: every agent of the
// project, the signed-in owner's own first.
func (h *Handler) ownersSpendOf(ctx context.Context, me session.Session, agents []team.Agent) ([]agentSpendView, error) {
	spend, err := h.agentsSpend(ctx, agents)
	if err != nil {
		return nil, err
	}
	var mine, others []agentSpendView
	for _, a := range spend {
		v := viewAgentSpend(a, me.Owner)
		if v.Mine {
			mine = append(mine, v)
		} else {
			others = append(others, v)
		}
	}
	return append(mine, others...), nil
}
