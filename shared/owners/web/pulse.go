package web

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/useprickle/prickle/shared/auth/session"
	"github.com/useprickle/prickle/shared/domain/pulse"
	"github.com/useprickle/prickle/shared/team"
)

type pulseView struct {
	chrome
	Project  team.Project
	Stale    string // the staleness window, e.g. "30 min"
	Groups   []ownerGroup
	Now      string
	Fragment string // the live fragment's URL, relative to the page
}

type ownerGroup struct {
	Owner  string
	Mine   bool
	Agents []agentPulse
}

type agentPulse struct {
	Agent, Availability, Doing, TaskID, Branch, LastDecision string
	Files                                                    []string
	Reported                                                 bool
	Stale                                                    bool
	Ago, At                                                  string
	// Spend is the agent's model spend today and this month.
	Spend spendLine
}

// pulseOf builds Team Pulse: every agent of the project, grouped by owner
// (the signed-in owner first), each with its latest report.
func (h *Handler) pulseOf(r *http.Request, me session.Session, p team.Project, agents []team.Agent) (*pulseView, error) {
	entries, err := h.cfg.Store.Pulse(r.Context(), p.Slug)
	if err != nil {
		return nil, err
	}
	spend, err := h.pulseSpend(r.Context(), agents)
	if err != nil {
		return nil, err
	}
	byAgent := map[string]pulse.Entry{}
	for _, e := range entries {
		byAgent[e.AgentID] = e
	}
	now := h.now()
	window := p.StaleAfter()
	v := &pulseView{chrome: chrome{Title: "Team Pulse · " + p.Name, Me: me.Owner, CSRF: h.keys.FormToken(me)},
		Project: p, Stale: strings.TrimSuffix(window.String(), "0s"), Now: now.Format(time.RFC3339), Fragment: url.PathEscape(p.Slug) + "/pulse"}
	if window%time.Minute == 0 {
		v.Stale = fmt.Sprintf("%d min", int(window/time.Minute))
	}
	groups := map[string]*ownerGroup{}
	for _, a := range agents {
		g, ok := groups[a.Owner]
		if !ok {
			g = &ownerGroup{Owner: a.Owner, Mine: a.Owner == me.Owner}
			groups[a.Owner] = g
		}
		ap := agentPulse{Agent: a.ID, Spend: spend[a.ID]}
		if e, ok := byAgent[a.ID]; ok {
			ap.Reported = true
			ap.Availability, ap.Doing, ap.Files = e.Availability, e.Doing, e.Files
			if e.TaskID != nil {
				ap.TaskID = *e.TaskID
			}
			if e.Branch != nil {
				ap.Branch = *e.Branch
			}
			if e.LastDecision != nil {
				ap.LastDecision = *e.LastDecision
			}
			ap.Ago, ap.At = ago(now, e.UpdatedAt), e.UpdatedAt.UTC().Format(time.RFC3339)
			ap.Stale = now.Sub(e.UpdatedAt) > window
		}
		g.Agents = append(g.Agents, ap)
	}
	for _, g := range groups {
		v.Groups = append(v.Groups, *g)
	}
	slices.SortFunc(v.Groups, func(a, b ownerGroup) int {
		if a.Mine != b.Mine {
			if a.Mine {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Owner, b.Owner)
	})
	return v, nil
}

// projectPage opens a page of /p/{project} for the signed-in owner: a
// project none of its agents is in is a 404, like one that does not exist.
// On false it has written the answer.
func (h *Handler) projectPage(w http.ResponseWriter, r *http.Request) (session.Session, team.Project, []team.Agent, bool) {
	me, ok := h.signedIn(w, r, false)
	if !ok {
		return me, team.Project{}, nil, false
	}
	p, agents, err := h.projectOf(r.Context(), me.Owner, r.PathValue("project"))
	if h.lookupFailed(w, r, me, err) {
		return me, p, nil, false
	}
	return me, p, agents, true
}

// projectView serves a GET page of /p/{project}: projectPage's checks, then
// the view build makes, rendered with the template name.
func projectView[V any](h *Handler, w http.ResponseWriter, r *http.Request, name string, build func(*http.Request, session.Session, team.Project, []team.Agent) (V, error)) {
	me, p, agents, ok := h.projectPage(w, r)
	if !ok {
		return
	}
	v, err := build(r, me, p, agents)
	if err != nil {
		h.failed(w, r, err)
		return
	}
	h.render(w, r, http.StatusOK, name, v)
}

// teamPulse is GET /p/{project}.
func (h *Handler) teamPulse(w http.ResponseWriter, r *http.Request) {
	projectView(h, w, r, "pulse.html", h.pulseOf)
}

// pulseFragment is GET /p/{project}/pulse: the Team Pulse list alone, which
// /static/pulse.js fetches every few seconds and swaps in place. Its links
// are relative to the page (/p/{project}), not to the fragment.
func (h *Handler) pulseFragment(w http.ResponseWriter, r *http.Request) {
	me, ok := h.signedIn(w, r, true)
	if !ok {
		return
	}
	p, agents, err := h.projectOf(r.Context(), me.Owner, r.PathValue("project"))
	if errors.Is(err, team.ErrNotFound) {
		infoOf(r).outcome = "not_found"
		w.Header().Set("Cache-Control", "no-store")
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	if err != nil {
		h.failed(w, r, err)
		return
	}
	v, err := h.pulseOf(r, me, p, agents)
	if err != nil {
		h.failed(w, r, err)
		return
	}
	v.Root = "../"
	h.render(w, r, http.StatusOK, "pulse-list", v)
}
