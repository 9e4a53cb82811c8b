package web

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/useprickle/prickle/shared/auth/session"
	"github.com/useprickle/prickle/shared/domain/audit"
	"github.com/useprickle/prickle/shared/domain/budget"
	"github.com/useprickle/prickle/shared/domain/grant"
	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/team"
)

// DefaultGrantHours is the length a grant form offers first.
const DefaultGrantHours = 8

// grantChoice is what a decide form offers besides "approve once" for one
// step, with how a pattern on its field reads.
type grantChoice struct {
	Field, Pattern string
	Hours          int
	MaxHours       int
	Syntax         syntaxView
}

func grantChoiceOf(s step.Step) grantChoice {
	field, value := grant.DefaultField(s.Input)
	return grantChoice{Field: field, Pattern: value, Hours: DefaultGrantHours, MaxHours: grant.MaxHours, Syntax: viewSyntax(grant.SyntaxOf(field))}
}

// grantRequestOf reads the grant part of a decide form: nil for "approve
// once" (or a refusal), else the request, checked before anything is decided.
func grantRequestOf(form url.Values, via string) (*team.GrantRequest, error) {
	scope := form.Get("grant")
	if scope == "" || scope == "once" || form.Get("decision") != "approve" {
		return nil, nil
	}
	hours, err := strconv.Atoi(strings.TrimSpace(form.Get("hours")))
	if err != nil {
		return nil, fmt.Errorf("say for how many hours (%d to %d)", grant.MinHours, grant.MaxHours)
	}
	r := &team.GrantRequest{Scope: grant.Scope(scope), Hours: hours, Via: via}
	if r.Scope == grant.ScopePattern {
		r.Field, r.Pattern = strings.TrimSpace(form.Get("field")), form.Get("pattern")
	}
	if err := team.CheckGrant(*r); err != nil {
		return nil, err
	}
	return r, nil
}

// grantView is one grant as the task and owners pages list it.
type grantView struct {
	ID, Owner, Agent, Tool, What, Status, Created, Expires, Revoked string
	Uses                                                            int
	CanRevoke                                                       bool
}

func viewGrants(grants []grant.Grant, me string, now time.Time, keep func(grant.Grant) bool) []grantView {
	out := []grantView{}
	for _, g := range grants {
		if keep != nil && !keep(g) {
			continue
		}
		v := grantView{ID: g.ID, Owner: g.Owner, Agent: g.Agent, Tool: g.ToolName, What: g.Describe(), Status: g.Status(now),
			Created: stamp(g.CreatedAt), Expires: stamp(g.ExpiresAt), Uses: g.Uses, CanRevoke: g.Owner == me && g.Live(now)}
		if g.RevokedAt != nil {
			v.Revoked = fmt.Sprintf("%s by %s", stamp(*g.RevokedAt), g.RevokedBy)
		}
		out = append(out, v)
	}
	slices.SortStableFunc(out, func(a, b grantView) int { return cmp.Compare(b.Created, a.Created) })
	return out
}

// grantList is what the grant-list template needs: the grants, and how to post a revocation.
type grantList struct {
	Root, CSRF, Project, Task string
	Grants                    []grantView
}

// ownersView is the owners' page of a project: grants, budgets, spend, audit.
type ownersView struct {
	chrome
	Project team.Project
	Grants  []grantView
	Budgets []budgetView
	Spend   []spendView
	// Models are the agents' model spend and caps.
	Models   []agentSpendView
	Day      string
	MaxHours int
	// Form starts the budget form from the owner's own budget, if any.
	Form        budgetView
	Notice      string
	NoticeClass string
	// Runners are the signed-in owner's live joined runners of this project's agents.
	Runners []runnerView
}

// GrantList feeds the grant-list template.
func (v *ownersView) GrantList() grantList {
	return grantList{Root: v.Root, CSRF: v.CSRF, Project: v.Project.Slug, Grants: v.Grants}
}

type budgetView struct {
	Owner, Unit, Limit, SetAt string
	AmountField, AmountTool   string
	// ReadsFrom says where the amount is read; Auto whether spending within
	// the budget is allowed without asking, and if not why.
	ReadsFrom, Auto string
	AutoAllow, Mine bool
}

func viewBudget(b budget.Budget, me string) budgetView {
	v := budgetView{Owner: b.Owner, Unit: b.Unit, Limit: b.PerAgentPerDay.String(), SetAt: stamp(b.SetAt), AmountField: b.AmountField, AmountTool: b.AmountTool,
		ReadsFrom: cmp.Or(b.ReadsFrom(), "nowhere"), Auto: "off", AutoAllow: b.AutoAllow, Mine: b.Owner == me}
	switch {
	case b.AutoAllow && b.AmountField == "":
		v.Auto = "asks every time: no amount field named"
	case b.AutoAllow:
		v.Auto = "on"
	}
	return v
}

type spendView struct {
	Agent, Unit, Spent, Left string
}

// ownersPage is GET /p/{project}/owners.
func (h *Handler) ownersPage(w http.ResponseWriter, r *http.Request) {
	me, p, _, ok := h.projectPage(w, r)
	if !ok {
		return
	}
	v, err := h.ownersViewOf(r, me, p)
	if err != nil {
		h.failed(w, r, err)
		return
	}
	if notice, ok := ownersNotices[r.URL.Query().Get("done")]; ok {
		v.Notice, v.NoticeClass = notice, "ok"
	}
	h.render(w, r, http.StatusOK, "owners.html", v)
}

// ownersNotices are what the owners page says after a change (its done=).
var ownersNotices = map[string]string{
	"revoked": noticeRevoked,
	"budget":  "Budget saved.",
	"cap":     "Cap saved: it applies from now; an agent under its new cap starts its waiting work at once.",
	"runner":  "Runner revoked: its token no longer works, so its next claim or call is refused.",
}

// noticeRevoked is said by the owners page and the task page after a grant is revoked.
const noticeRevoked = "Revoked: the next call it would have allowed asks you again."

func (h *Handler) ownersViewOf(r *http.Request, me session.Session, p team.Project) (*ownersView, error) {
	ctx := r.Context()
	now := h.now()
	grants, err := h.cfg.Store.ProjectGrants(ctx, p.Slug)
	if err != nil {
		return nil, err
	}
	budgets, err := h.cfg.Store.ProjectBudgets(ctx, p.Slug)
	if err != nil {
		return nil, err
	}
	day := budget.Day(now)
	spend, err := h.cfg.Store.ProjectSpend(ctx, p.Slug, day)
	if err != nil {
		return nil, err
	}
	v := &ownersView{chrome: chrome{Title: "Owners · " + p.Name, Me: me.Owner, CSRF: h.keys.FormToken(me)}, Project: p,
		Grants: viewGrants(grants, me.Owner, now, nil), Day: day, MaxHours: grant.MaxHours}
	v.Form = budgetView{Unit: "USD", Limit: "50"}
	agents, err := h.cfg.Store.ListAgents(ctx, p.Slug)
	if err != nil {
		return nil, err
	}
	if v.Models, err = h.ownersSpendOf(ctx, me, agents); err != nil {
		return nil, err
	}
	if v.Runners, err = h.joinedRunnersOf(r, me, agents); err != nil {
		return nil, err
	}
	limits := map[string]budget.Budget{}
	for _, b := range budgets {
		bv := viewBudget(b, me.Owner)
		if bv.Mine {
			v.Form = bv
		}
		limits[b.Owner+"#"+b.Unit] = b
		v.Budgets = append(v.Budgets, bv)
	}
	slices.SortFunc(v.Budgets, func(a, b budgetView) int { return cmp.Or(cmp.Compare(a.Owner, b.Owner), cmp.Compare(a.Unit, b.Unit)) })
	for _, s := range spend {
		sv := spendView{Agent: s.Agent, Unit: s.Unit, Spent: s.Spent.String(), Left: "—"}
		if b, ok := limits[s.Owner+"#"+s.Unit]; ok {
			sv.Left = b.Left(s.Spent).String()
		}
		v.Spend = append(v.Spend, sv)
	}
	slices.SortFunc(v.Spend, func(a, b spendView) int { return cmp.Or(cmp.Compare(a.Agent, b.Agent), cmp.Compare(a.Unit, b.Unit)) })
	return v, nil
}

// ownersRefused shows the owners page again with why nothing changed.
func (h *Handler) ownersRefused(w http.ResponseWriter, r *http.Request, me session.Session, p team.Project, why string) {
	v, err := h.ownersViewOf(r, me, p)
	if err != nil {
		h.failed(w, r, err)
		return
	}
	v.Notice, v.NoticeClass = "Nothing was changed: "+why, "warn"
	h.render(w, r, http.StatusConflict, "owners.html", v)
}

// ownersChanged answers an owners-page form once its change was made or
// refused: the owners page again with the rules' refusal, or a redirect to
// back (the outcome logged).
func (h *Handler) ownersChanged(w http.ResponseWriter, r *http.Request, me session.Session, p team.Project, err error, outcome, back string) {
	var refusal *task.Refusal
	if errors.As(err, &refusal) {
		infoOf(r).outcome = "refused_by_rules"
		h.ownersRefused(w, r, me, p, refusal.Msg)
		return
	}
	if err != nil {
		h.failed(w, r, err)
		return
	}
	infoOf(r).outcome = outcome
	w.Header().Set("Location", back)
	w.WriteHeader(http.StatusSeeOther)
}

// revokeGrant is POST /p/{project}/grants/{grant}/revoke; back= says where to return (owners or the task).
func (h *Handler) revokeGrant(w http.ResponseWriter, r *http.Request) {
	me, p, ok := h.projectPost(w, r, h.lacksService())
	if !ok {
		return
	}
	t := r.PostForm.Get("task")
	via := audit.ViaOwners
	if t != "" {
		via = audit.ViaPage
	}
	_, err := h.cfg.Service.RevokeGrant(r.Context(), me.Owner, p.Slug, r.PathValue("grant"), decidedVia(via, me))
	back := "../../owners?done=revoked"
	if validTaskID(t) {
		back = "../../../../t/" + url.PathEscape(t) + "?decided=revoked"
	}
	h.ownersChanged(w, r, me, p, err, "revoked", back)
}

// setBudget is POST /p/{project}/budgets: the signed-in owner's own budget.
func (h *Handler) setBudget(w http.ResponseWriter, r *http.Request) {
	me, p, ok := h.projectPost(w, r, nil)
	if !ok {
		return
	}
	limit, err := budget.Parse(r.PostForm.Get("limit"))
	if err != nil {
		h.ownersRefused(w, r, me, p, err.Error())
		return
	}
	b := budget.Budget{Project: p.Slug, Owner: me.Owner, Unit: strings.TrimSpace(r.PostForm.Get("unit")), PerAgentPerDay: limit, AutoAllow: r.PostForm.Get("auto_allow") == "on",
		AmountField: strings.TrimSpace(r.PostForm.Get("amount_field")), AmountTool: strings.TrimSpace(r.PostForm.Get("amount_tool"))}
	if h.cfg.Service == nil {
		h.failed(w, r, errNoService)
		return
	}
	_, err = h.cfg.Service.SetBudget(r.Context(), b, decidedVia(audit.ViaOwners, me))
	h.ownersChanged(w, r, me, p, err, "budget_set", "owners?done=budget")
}

// auditExport is GET /p/{project}/audit.csv and /p/{project}/audit.json: the
// project's trail as a download, for an owner who may see the project.
func (h *Handler) auditExport(w http.ResponseWriter, r *http.Request) {
	_, p, _, ok := h.projectPage(w, r)
	if !ok {
		return
	}
	if h.cfg.Service == nil {
		h.failed(w, r, errNoService)
		return
	}
	entries, err := h.cfg.Service.ProjectAudit(r.Context(), p.Slug)
	if err != nil {
		h.failed(w, r, err)
		return
	}
	format := "json"
	if strings.HasSuffix(r.URL.Path, ".csv") {
		format = "csv"
	}
	name := fmt.Sprintf("prickle-audit-%s-%s.%s", p.Slug, h.now().Format("20060102T150405Z"), format)
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	switch format {
	case "csv":
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		err = audit.WriteCSV(w, entries)
	default:
		w.Header().Set("Content-Type", "application/json")
		err = audit.WriteJSON(w, entries)
	}
	if err != nil {
		h.cfg.Log.ErrorContext(r.Context(), "audit export", "error", err.Error())
	}
	infoOf(r).outcome = "exported"
}

func validTaskID(id string) bool {
	return id != "" && len(id) <= 64 && !strings.ContainsFunc(id, func(c rune) bool {
		return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-')
	})
}
