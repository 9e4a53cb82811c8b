package web

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/useprickle/prickle/shared/auth/session"
	"github.com/useprickle/prickle/shared/domain/audit"
	"github.com/useprickle/prickle/shared/domain/grant"
	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/team"
)

type taskView struct {
	chrome
	Task      task.Task
	Project   team.Project
	WaitingOn string
	Created   string
	Updated   string
	Result    *resultView
	// ClickImages: some screenshot is on a host not allowed, so the page
	// says why it shows a link instead.
	ClickImages bool
	Steps       []pendingStep
	CanDecideR  bool // the signed-in owner decides this result
	CanReview   bool // the signed-in owner reviews this result for the requester, one of their agents
	// NeedsOwnerApproval: the project asks the owner's approval of this deliverable type after an accept.
	NeedsOwnerApproval bool
	Round              string // the result shown (task.ResultRound), so a decision never lands on a newer one
	Timeline           []timelineEntry
	// Grants are the standing grants that can allow this task's calls: its
	// exact-call grants and the pattern grants of its assignee.
	Grants []grantView
	// Holders are the agents whose live Team Pulse holds files for this task.
	Holders []holderView
	// Runs are the task's runs with their model spend.
	Runs        runsView
	Notice      string
	NoticeClass string
}

// holderView is an agent's live Team Pulse entry on a task: the files it holds.
type holderView struct {
	Agent   string
	Files   []string
	At, Ago string
}

// GrantList feeds the grant-list template.
func (v *taskView) GrantList() grantList {
	return grantList{Root: v.Root, CSRF: v.CSRF, Project: v.Project.Slug, Task: v.Task.ID, Grants: v.Grants}
}

type pendingStep struct {
	*stepView
	ID        string
	CanDecide bool
	Owner     string
	Grant     grantChoice
}

type timelineEntry struct {
	At, Ago, By, Action, From, To, Note string
}

// taskOf loads a task the owner may see, with its project; ErrNotFound otherwise.
func (h *Handler) taskOf(r *http.Request, me session.Session, id string) (task.Task, team.Project, error) {
	if !validTaskID(id) {
		return task.Task{}, team.Project{}, team.ErrNotFound
	}
	t, err := h.cfg.Store.Task(r.Context(), id)
	if err != nil {
		return task.Task{}, team.Project{}, err
	}
	p, _, err := h.projectOf(r.Context(), me.Owner, t.Project)
	return t, p, err
}

// imageOf says how a screenshot at u is shown: inline when it is https on
// an allowed image host's default port, else as a link naming its host.
func (h *Handler) imageOf(u string) (inline bool, host string) {
	p, err := url.Parse(u)
	if err != nil {
		return false, ""
	}
	if p.Scheme == "https" && p.Port() == "" && slices.Contains(h.cfg.ImageHosts, strings.ToLower(p.Hostname())) {
		return true, ""
	}
	return false, p.Host
}

func webURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != ""
}

// taskPage is GET /t/{task}.
func (h *Handler) taskPage(w http.ResponseWriter, r *http.Request) {
	me, ok := h.signedIn(w, r, false)
	if !ok {
		return
	}
	v, status, err := h.taskViewOf(r, me)
	if h.lookupFailed(w, r, me, err) {
		return
	}
	if notice, ok := taskNotices[r.URL.Query().Get("decided")]; ok {
		v.Notice, v.NoticeClass = notice, "ok"
	}
	h.renderTask(w, r, status, v)
}

// taskNotices are what the task page says after a decision made on it (its decided=).
var taskNotices = map[string]string{
	"approved": "Approved: your decision is recorded and the agent is told.",
	"granted":  "Approved, and your standing grant is saved: calls it covers are allowed without asking until it expires or you revoke it.",
	"revoked":  noticeRevoked,
	"refused":  "Refused: your decision is recorded and the agent is told.",
	"edited":   "Approved as you edited it: your decision is recorded, and the run may make your edited call once.",
	"created":  "Task created on the board: its assignee is woken when it is routed.",
	"accepted": "Accepted: your review is recorded and the task moved on.",
	"rework":   "Sent back for rework: the assignee is told your feedback.",
	"rejected": "Rejected: your review is recorded and the task has ended.",
}

// renderTask lets screenshots load inline from the allowed image hosts
// only; any other image waits for the owner's click on its link.
func (h *Handler) renderTask(w http.ResponseWriter, r *http.Request, status int, v *taskView) {
	img := "img-src 'self'"
	for _, host := range h.cfg.ImageHosts {
		img += " https://" + host
	}
	w.Header().Set("Content-Security-Policy", "default-src 'self'; "+img+"; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'")
	infoOf(r).task = v.Task.ID
	h.render(w, r, status, "task.html", v)
}

func (h *Handler) taskViewOf(r *http.Request, me session.Session) (*taskView, int, error) {
	t, p, err := h.taskOf(r, me, r.PathValue("task"))
	if err != nil {
		return nil, 0, err
	}
	hist, err := h.cfg.Store.History(r.Context(), t.ID)
	if err != nil {
		return nil, 0, err
	}
	steps, err := h.cfg.Store.StepsForTask(r.Context(), t.ID)
	if err != nil {
		return nil, 0, err
	}
	now := h.now()
	v := &taskView{chrome: chrome{Title: t.ID + " · " + p.Name, Me: me.Owner, CSRF: h.keys.FormToken(me)}, Task: t, Project: p,
		Created: t.CreatedAt.UTC().Format(time.RFC3339), Updated: ago(now, t.UpdatedAt)}
	if t.WaitingOn != nil {
		v.WaitingOn = *t.WaitingOn
	}
	if t.Result != nil {
		v.Result = viewResult(t)
		// The task page links only URLs with a host; any other URL is shown as text.
		for i := range v.Result.Evidence {
			it := &v.Result.Evidence[i]
			if webURL(it.URL) {
				if it.Kind == "screenshot" {
					it.Image, it.ImageHost = h.imageOf(it.URL)
					v.ClickImages = v.ClickImages || it.ImageHost != ""
				}
			} else if it.URL != "" {
				it.Content = strings.TrimSpace(it.URL + "\n" + it.Content)
				it.URL = ""
			}
			it.Collapsible = it.Kind == "test_output" && it.Content != ""
		}
		v.CanDecideR = t.State == task.Approval && ownerOf(t.Assignee) == me.Owner
		v.CanReview = t.State == task.Verifying && ownerOf(t.Requester) == me.Owner
		v.NeedsOwnerApproval = slices.Contains(p.OwnerApprovalTypes, t.Packet.DeliverableType)
		v.Round = task.ResultRound(t)
	}
	slices.SortFunc(steps, func(a, b step.Step) int { return cmp.Compare(a.CreatedAt.UnixNano(), b.CreatedAt.UnixNano()) })
	for _, st := range steps {
		eff := st.Effective(now)
		if eff.Status != step.Pending {
			continue
		}
		v.Steps = append(v.Steps, pendingStep{stepView: viewStep(eff), ID: eff.ID, Owner: ownerOf(eff.Agent),
			CanDecide: ownerOf(eff.Agent) == me.Owner && t.State.Open(), Grant: grantChoiceOf(eff)})
	}
	if v.Holders, err = h.holdersOf(r, p, t.ID, now); err != nil {
		return nil, 0, err
	}
	grants, err := h.cfg.Store.ProjectGrants(r.Context(), t.Project)
	if err != nil {
		return nil, 0, err
	}
	v.Grants = viewGrants(grants, me.Owner, now, func(g grant.Grant) bool {
		return g.TaskID == t.ID || (g.Scope == grant.ScopePattern && g.Agent == t.Assignee)
	})
	if v.Runs, err = h.runsOf(r.Context(), t.ID); err != nil {
		return nil, 0, err
	}
	for i := len(hist) - 1; i >= 0; i-- {
		e := hist[i]
		te := timelineEntry{At: e.At.UTC().Format(time.RFC3339), Ago: ago(now, e.At), By: e.By, Action: strings.ReplaceAll(e.Action, "_", " "), To: string(e.To)}
		if e.From != nil {
			te.From = string(*e.From)
		}
		if e.Note != nil {
			te.Note = *e.Note
		}
		v.Timeline = append(v.Timeline, te)
	}
	return v, http.StatusOK, nil
}

// holdersOf lists the agents whose live Team Pulse entry (within the
// project's window) names the task and holds files: what their runners
// claimed as they edited, or what they said.
func (h *Handler) holdersOf(r *http.Request, p team.Project, taskID string, now time.Time) ([]holderView, error) {
	entries, err := h.cfg.Store.Pulse(r.Context(), p.Slug)
	if err != nil {
		return nil, err
	}
	var out []holderView
	for _, e := range entries {
		if e.TaskID == nil || *e.TaskID != taskID || len(e.Files) == 0 || now.Sub(e.UpdatedAt) > p.StaleAfter() {
			continue
		}
		out = append(out, holderView{Agent: e.AgentID, Files: e.Files, At: e.UpdatedAt.UTC().Format(time.RFC3339), Ago: ago(now, e.UpdatedAt)})
	}
	slices.SortFunc(out, func(a, b holderView) int { return strings.Compare(a.Agent, b.Agent) })
	return out, nil
}

// decideOnTask is POST /t/{task}: the signed-in owner approves or refuses a
// pending step (form field step) or the result waiting for approval, through
// the team service as an approval link would.
func (h *Handler) decideOnTask(w http.ResponseWriter, r *http.Request) {
	me, ok := h.signedIn(w, r, false)
	if !ok {
		return
	}
	if !h.ownerForm(w, r, me, decideForm) {
		return
	}
	t, _, err := h.taskOf(r, me, r.PathValue("task"))
	if h.lookupFailed(w, r, me, err) {
		return
	}
	infoOf(r).task = t.ID
	if verdict := r.PostForm.Get("review"); verdict != "" {
		h.reviewOnTask(w, r, me, t, verdict)
		return
	}
	approve, edit, msg, problem := decisionOf(r.PostForm)
	if problem != "" {
		h.taskRefused(w, r, me, http.StatusBadRequest, problem)
		return
	}
	if h.cfg.Service == nil {
		h.failed(w, r, errNoService)
		return
	}
	verdict := map[bool]string{true: "approved", false: "refused"}[approve]
	if stepID := r.PostForm.Get("step"); stepID != "" {
		infoOf(r).kind, infoOf(r).step = "step", stepID
		var gr *team.GrantRequest
		if gr, err = grantRequestOf(r.PostForm, decidedVia(audit.ViaPage, me)); err != nil {
			h.taskRefused(w, r, me, http.StatusBadRequest, err.Error())
			return
		}
		var edited json.RawMessage
		if edit {
			st, serr := h.cfg.Store.Step(r.Context(), t.ID, stepID)
			switch {
			case errors.Is(serr, team.ErrNotFound):
				h.taskEditRefused(w, r, me, stepID, fmt.Sprintf("no step %s on task %s", stepID, t.ID))
				return
			case serr != nil:
				h.failed(w, r, serr)
				return
			}
			if edited, err = editedCall(r.PostForm, st); err != nil {
				h.taskEditRefused(w, r, me, stepID, err.Error())
				return
			}
			verdict = "edited"
		}
		_, err = h.cfg.Service.DecideStep(r.Context(), me.Owner, t.ID, stepID, approve, edited, msg, decidedVia(audit.ViaPage, me))
		var refusal *task.Refusal
		if edit && errors.As(err, &refusal) {
			h.taskEditRefused(w, r, me, stepID, refusal.Msg)
			return
		}
		if err == nil && gr != nil {
			_, err = h.cfg.Service.GrantFromStep(r.Context(), me.Owner, t.ID, stepID, *gr)
			verdict = "granted"
		}
	} else if edit {
		h.taskRefused(w, r, me, http.StatusBadRequest, "Only a step's call can be edited.")
		return
	} else {
		infoOf(r).kind = "result"
		if ownerOf(t.Assignee) != me.Owner {
			err = task.Refusef("the result of task %s waits for %s's approval, not yours", t.ID, ownerOf(t.Assignee))
		} else {
			_, err = h.cfg.Service.DecideResult(r.Context(), me.Owner, t.ID, r.PostForm.Get("round"), approve, msg, decidedVia(audit.ViaPage, me))
		}
	}
	if h.taskFailed(w, r, me, err) {
		return
	}
	infoOf(r).outcome = verdict
	w.Header().Set("Location", url.PathEscape(t.ID)+"?decided="+verdict)
	w.WriteHeader(http.StatusSeeOther)
}

// taskEditRefused shows the task page again after an edit was not accepted:
// the step's form, if it still waits, holds what the owner sent.
func (h *Handler) taskEditRefused(w http.ResponseWriter, r *http.Request, me session.Session, stepID, why string) {
	infoOf(r).outcome = "bad_edit"
	v, _, err := h.taskViewOf(r, me)
	if err != nil {
		h.failed(w, r, err)
		return
	}
	status := http.StatusConflict
	for i := range v.Steps {
		if st := &v.Steps[i]; st.ID == stepID && st.CanDecide {
			status = http.StatusBadRequest
			st.Edit = st.Edit.again(r.PostForm)
		}
	}
	v.Notice, v.NoticeClass = "Nothing was decided: "+strings.TrimSuffix(why, "; nothing was decided")+".", "warn"
	h.renderTask(w, r, status, v)
}

// taskRefused shows the task page again with why nothing was decided.
func (h *Handler) taskRefused(w http.ResponseWriter, r *http.Request, me session.Session, status int, why string) {
	v, _, err := h.taskViewOf(r, me)
	if err != nil {
		h.failed(w, r, err)
		return
	}
	v.Notice, v.NoticeClass = "Nothing was decided: "+why, "warn"
	h.renderTask(w, r, status, v)
}

// taskFailed answers a task page's POST whose decision or review failed: a
// refusal by the rules (409, its message), or an error; false when err is nil.
func (h *Handler) taskFailed(w http.ResponseWriter, r *http.Request, me session.Session, err error) bool {
	var refusal *task.Refusal
	switch {
	case errors.As(err, &refusal):
		infoOf(r).outcome = "refused_by_rules"
		h.taskRefused(w, r, me, http.StatusConflict, refusal.Msg)
	case err != nil:
		h.failed(w, r, err)
	default:
		return false
	}
	return true
}
