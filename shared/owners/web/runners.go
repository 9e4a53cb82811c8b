package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/useprickle/prickle/shared/auth/oauthstate"
	"github.com/useprickle/prickle/shared/auth/session"
	"github.com/useprickle/prickle/shared/domain/audit"
	"github.com/useprickle/prickle/shared/team"
)

// runnerView is a runner joined by prickle-runner login, as the owners page lists it.
type runnerView struct {
	ID, Name, Agent, Joined, Token string
}

// joinedRunnersOf lists the owner's live joined runners of the project's agents.
func (h *Handler) joinedRunnersOf(r *http.Request, me session.Session, agents []team.Agent) ([]runnerView, error) {
	joined, err := h.cfg.Store.OwnerJoinedRunners(r.Context(), me.Owner)
	if err != nil {
		return nil, err
	}
	out := []runnerView{}
	for _, j := range joined {
		if j.Revoked || !slices.ContainsFunc(agents, func(a team.Agent) bool { return a.ID == j.Agent }) {
			continue
		}
		out = append(out, runnerView{ID: j.ID, Name: j.Name, Agent: j.Agent, Joined: stamp(j.CreatedAt), Token: j.TokenHash[:min(12, len(j.TokenHash))]})
	}
	return out, nil
}

// revokeRunner is POST /p/{project}/runners/{runner}/revoke: the owner ends
// a joined runner's token at once. Only the owner who joined it can.
func (h *Handler) revokeRunner(w http.ResponseWriter, r *http.Request) {
	me, p, ok := h.projectPost(w, r, nil)
	if !ok {
		return
	}
	j, err := h.cfg.Store.RevokeJoinedRunner(r.Context(), me.Owner, r.PathValue("runner"))
	if errors.Is(err, oauthstate.ErrNotFound) {
		infoOf(r).outcome = "refused_by_rules"
		h.ownersRefused(w, r, me, p, "you have no such joined runner.")
		return
	}
	if err == nil {
		h.cfg.Log.InfoContext(r.Context(), "runner revoked", "owner", me.Owner, "agent", j.Agent, "runner", j.ID)
		err = h.auditRunnerRevoked(r, me, j)
	}
	h.ownersChanged(w, r, me, p, err, "runner_revoked", "../../owners?done=runner")
}

// auditRunnerRevoked records the revocation in the trail of each project of
// the runner's agent, as the token's minting was.
func (h *Handler) auditRunnerRevoked(r *http.Request, me session.Session, j oauthstate.JoinedRunner) error {
	if h.cfg.Service == nil {
		return nil
	}
	ag, err := h.cfg.Service.Store.Agent(r.Context(), j.Agent)
	if err != nil {
		return err
	}
	now := h.now().UTC()
	entries := make([]audit.Entry, 0, len(ag.Projects))
	for _, project := range ag.Projects {
		entries = append(entries, audit.Entry{At: now, Project: project, Action: audit.TokenRevoked, Actor: me.Owner, Via: decidedVia(audit.ViaOwners, me),
			Detail: fmt.Sprintf("agent token %s… of runner %s (%q) revoked", j.TokenHash[:min(12, len(j.TokenHash))], j.ID, j.Name), Key: "runner-revoke#" + j.ID})
	}
	return h.cfg.Service.Store.AppendAudit(context.WithoutCancel(r.Context()), entries...)
}
