package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/useprickle/prickle/shared/auth/link"
	"github.com/useprickle/prickle/shared/auth/session"
	"github.com/useprickle/prickle/shared/domain/audit"
	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/owners/sameorigin"
	"github.com/useprickle/prickle/shared/team"
)

// MaxMessage is the longest owner's message accepted, in characters.
const MaxMessage = 2000

// verify checks the link in the path; on failure it has written the 403 or 410 page.
func (h *Handler) verify(w http.ResponseWriter, r *http.Request) (link.Claims, string, bool) {
	token := r.PathValue("token")
	c, err := h.cfg.Signer.Verify(token, h.now())
	info := infoOf(r)
	switch {
	case errors.Is(err, link.ErrExpired):
		info.kind, info.task, info.step, info.outcome = c.Kind, c.TaskID, c.StepID, "expired"
		h.message(w, r, http.StatusGone, messageView{
			chrome: chrome{Title: "Link expired"}, Heading: "This approval link has expired",
			Notice:      fmt.Sprintf("It expired at %s. Nothing was decided with it; if the agent still needs an answer it will ask again.", stamp(c.Expires)),
			NoticeClass: "warn",
		})
		return c, token, false
	case err != nil:
		info.outcome = "tampered"
		h.message(w, r, http.StatusForbidden, messageView{
			chrome: chrome{Title: "Invalid link"}, Heading: "This link is not valid",
			Notice:      "It was changed or was not issued by Prickle, so it can decide nothing. Open the link from the original email or Slack message.",
			NoticeClass: "error",
		})
		return c, token, false
	}
	info.kind, info.task, info.step = c.Kind, c.TaskID, c.StepID
	return c, token, true
}

// load builds the page of what the link decides, as it stands now.
func (h *Handler) load(ctx context.Context, c link.Claims) (page, error) {
	if c.Kind == link.KindStep {
		st, err := h.cfg.Store.Step(ctx, c.TaskID, c.StepID)
		if err != nil {
			return page{}, err
		}
		eff := st.Effective(h.now())
		p := page{
			chrome:  chrome{Title: fmt.Sprintf("Approve %s for %s?", st.ToolName, st.Agent)},
			Heading: fmt.Sprintf("%s asks to run %s", st.Agent, st.ToolName),
			Step:    viewStep(eff), CanDecide: eff.Status == step.Pending, Until: stamp(eff.ExpiresAt), Grant: grantChoiceOf(eff),
		}
		if !p.CanDecide {
			p.Decided = stepDecided(eff)
		}
		return p, nil
	}
	t, err := h.cfg.Store.Task(ctx, c.TaskID)
	if err != nil {
		return page{}, err
	}
	p := page{
		chrome:  chrome{Title: fmt.Sprintf("Approve the result of task %s?", t.ID)},
		Heading: fmt.Sprintf("%s returned a result for your approval", t.Assignee),
		Result:  viewResult(t), CanDecide: t.State == task.Approval && task.ResultRound(t) == c.Round, Until: stamp(c.Expires),
	}
	if !p.CanDecide {
		p.Decided = h.resultDecided(ctx, t)
	}
	return p, nil
}

// stepDecided says who decided a step and when, or why there is nothing to decide.
func stepDecided(s step.Step) string {
	at := "an unknown time"
	if s.DecidedAt != nil {
		at = stamp(*s.DecidedAt)
	}
	switch {
	case s.DecidedBy != "":
		verdict := "approved"
		switch s.Status {
		case step.Refused:
			verdict = "refused"
		case step.Consumed:
			verdict = "approved, and the call was made"
		case step.Expired:
			verdict = "approved, but the approval expired unused at " + stamp(s.ExpiresAt)
		}
		out := fmt.Sprintf("Already decided by %s at %s: %s.", s.DecidedBy, at, verdict)
		if s.Message != "" {
			out += fmt.Sprintf(" Message: %q", s.Message)
		}
		return out
	case s.Status == step.Expired:
		return fmt.Sprintf("Expired at %s: nobody decided in time, so nothing can be decided now.", stamp(s.ExpiresAt))
	case s.Status == step.Withdrawn:
		return "Withdrawn: the agent asked for another step instead, so there is nothing to decide."
	}
	return fmt.Sprintf("This step is %s; there is nothing to decide.", s.Status)
}

// resultDecided finds the owner's last decision on a task's result in its history.
func (h *Handler) resultDecided(ctx context.Context, t task.Task) string {
	hist, err := h.cfg.Store.History(ctx, t.ID)
	if err == nil {
		for i := len(hist) - 1; i >= 0; i-- {
			e := hist[i]
			if e.Action != "owner_approve" && e.Action != "owner_refuse" {
				continue
			}
			verdict := "approved: the task is completed"
			if e.Action == "owner_refuse" {
				verdict = "refused: the task went back to working"
			}
			out := fmt.Sprintf("Already decided by %s at %s: %s.", strings.TrimPrefix(e.By, "owner:"), stamp(e.At), verdict)
			if e.Note != nil && *e.Note != "" {
				out += fmt.Sprintf(" Message: %q", *e.Note)
			}
			if t.State != task.Completed && t.State != task.Working {
				out += fmt.Sprintf(" The task is now %s.", t.State)
			}
			return out
		}
	}
	return fmt.Sprintf("Task %s is %s; its result is not waiting for an owner, so there is nothing to decide.", t.ID, t.State)
}

// showApproval is GET /a/{token}: it reads and shows, and never decides
// (mail scanners and Slack unfurlers fetch links).
func (h *Handler) showApproval(w http.ResponseWriter, r *http.Request) {
	c, token, g, me, ok := h.openLink(w, r, h.verify)
	if !ok {
		return
	}
	done := r.URL.Query().Get("done") == "1"
	p, err := h.load(r.Context(), c)
	if err != nil {
		h.loadFailed(w, r, err)
		return
	}
	p.WhoDecides = whoDecides(c)
	if p.CanDecide && g == gateSignIn {
		p.CanDecide, p.SignInAs, p.Next = false, c.Owner, "a/"+token
	} else if p.CanDecide {
		p.FormToken = h.cfg.Signer.FormToken(token)
		p.offerEditSignIn(c, token, g, me)
	} else if done && strings.HasPrefix(p.Decided, "Already decided by") {
		p.Heading = "Your decision is recorded"
		p.Notice, p.NoticeClass = "Thank you: the agent is told. This link can decide nothing more.", "ok"
	}
	infoOf(r).outcome = "shown"
	h.render(w, r, http.StatusOK, "approval.html", p)
}

func (h *Handler) loadFailed(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, team.ErrNotFound) {
		infoOf(r).outcome = "not_found"
		h.message(w, r, http.StatusNotFound, messageView{
			chrome: chrome{Title: "Not found"}, Heading: "Nothing to decide here",
			Notice: "What this link was for no longer exists.", NoticeClass: "warn",
		})
		return
	}
	h.failed(w, r, err)
}

func (h *Handler) failed(w http.ResponseWriter, r *http.Request, err error) {
	infoOf(r).outcome = "error"
	h.cfg.Log.ErrorContext(r.Context(), "approval page failed", "error", err.Error())
	h.message(w, r, http.StatusInternalServerError, messageView{
		chrome: chrome{Title: "Something went wrong"}, Heading: "Something went wrong",
		Notice: "Nothing was decided. Try again in a minute.", NoticeClass: "error",
	})
}

// decide is POST /a/{token}: it verifies the link again, checks the form
// came from the page, records the decision once, and redirects to the GET.
func (h *Handler) decide(w http.ResponseWriter, r *http.Request) {
	c, token, me, ok := h.gatePost(w, r, "Decisions are made on the approval page", h.verify, func(c link.Claims, token, notice string) {
		p, err := h.load(r.Context(), c)
		if err != nil {
			h.loadFailed(w, r, err)
			return
		}
		p.WhoDecides, p.CanDecide, p.SignInAs, p.Next = whoDecides(c), false, c.Owner, "a/"+token
		p.Notice, p.NoticeClass = notice, "warn"
		h.render(w, r, http.StatusForbidden, "approval.html", p)
	})
	if !ok {
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxDecideForm)
	if err := r.ParseForm(); err != nil {
		h.badForm(w, r, "The form could not be read.")
		return
	}
	if !h.cfg.Signer.CheckFormToken(token, r.PostForm.Get("csrf")) {
		infoOf(r).outcome = "bad_csrf"
		h.message(w, r, http.StatusForbidden, messageView{
			chrome: chrome{Title: "Refused"}, Heading: "Decisions are made on the approval page",
			Notice: "This form did not come from the approval page, so nothing was decided. Open the link and use its buttons.", NoticeClass: "error",
		})
		return
	}
	approve, edit, msg, problem := decisionOf(r.PostForm)
	if r.PostForm.Get("decision") == decisionEdit && c.Kind != link.KindStep {
		problem = "Only a step's call can be edited."
	}
	if problem != "" {
		h.badForm(w, r, problem)
		return
	}
	// gatePost let the POST through, so the link may decide (gateOpen); an
	// edit also needs its owner signed in.
	if edit && editNeedsSignIn(gateOpen, me) {
		h.editNeedsSession(w, r, c, token, gateOpen, me)
		return
	}
	if h.cfg.Service == nil {
		h.failed(w, r, errNoService)
		return
	}
	var err error
	if c.Kind == link.KindStep {
		gr, gerr := grantRequestOf(r.PostForm, decidedVia(audit.ViaLink, me))
		if gerr != nil {
			h.badForm(w, r, gerr.Error()+".")
			return
		}
		var edited json.RawMessage
		if edit {
			st, serr := h.cfg.Store.Step(r.Context(), c.TaskID, c.StepID)
			if serr != nil {
				h.loadFailed(w, r, serr)
				return
			}
			if edited, err = editedCall(r.PostForm, st); err != nil {
				h.editRefused(w, r, c, token, err.Error())
				return
			}
		}
		_, err = h.cfg.Service.DecideStep(r.Context(), c.Owner, c.TaskID, c.StepID, approve, edited, msg, decidedVia(audit.ViaLink, me))
		if err == nil && gr != nil {
			_, err = h.cfg.Service.GrantFromStep(r.Context(), c.Owner, c.TaskID, c.StepID, *gr)
		}
	} else {
		_, err = h.cfg.Service.DecideResult(r.Context(), c.Owner, c.TaskID, c.Round, approve, msg, decidedVia(audit.ViaLink, me))
	}
	var refusal *task.Refusal
	if errors.As(err, &refusal) && edit {
		h.editRefused(w, r, c, token, refusal.Msg)
		return
	}
	if errors.As(err, &refusal) {
		// Decided before (or no longer decidable): show who decided and when.
		infoOf(r).outcome = "refused_by_rules"
		p, lerr := h.load(r.Context(), c)
		if lerr != nil {
			p = page{chrome: chrome{Title: "Not decided"}, Heading: "Nothing was decided"}
		}
		p.CanDecide = false
		p.Notice, p.NoticeClass = refusal.Msg, "warn"
		h.render(w, r, http.StatusConflict, "approval.html", p)
		return
	}
	if err != nil {
		h.failed(w, r, fmt.Errorf("decide %s %s/%s: %w", c.Kind, c.TaskID, c.StepID, err))
		return
	}
	infoOf(r).outcome = map[bool]string{true: "approved", false: "refused"}[approve]
	if edit {
		infoOf(r).outcome = "approved_edited"
	}
	// Post/Redirect/Get: a reload shows the decision instead of sending it
	// again. The Location is relative to the page itself, so it also works
	// under an API Gateway stage path.
	w.Header().Set("Location", "?done=1")
	w.WriteHeader(http.StatusSeeOther)
}

// editRefused shows the approval page again after an edit was not
// accepted, saying why: while the step still waits, its form holds what the
// owner sent, to correct and send again; nothing was decided.
func (h *Handler) editRefused(w http.ResponseWriter, r *http.Request, c link.Claims, token, why string) {
	infoOf(r).outcome = "bad_edit"
	p, err := h.load(r.Context(), c)
	if err != nil {
		p = page{chrome: chrome{Title: "Not decided"}, Heading: "Nothing was decided"}
	}
	p.WhoDecides = whoDecides(c)
	status := http.StatusConflict
	if p.CanDecide {
		status = http.StatusBadRequest
		p.FormToken = h.cfg.Signer.FormToken(token)
		p.Step.Edit = p.Step.Edit.again(r.PostForm)
	}
	p.Notice, p.NoticeClass = "Nothing was decided: "+strings.TrimSuffix(why, "; nothing was decided")+".", "warn"
	h.render(w, r, status, "approval.html", p)
}

// editNeedsSession answers an edit sent with a link alone (nobody signed
// in): 403, nothing decided, the page again with the sign-in to edit.
func (h *Handler) editNeedsSession(w http.ResponseWriter, r *http.Request, c link.Claims, token string, g gate, me session.Session) {
	infoOf(r).outcome = "edit_needs_sign_in"
	p, err := h.load(r.Context(), c)
	if err != nil {
		h.loadFailed(w, r, err)
		return
	}
	p.WhoDecides = whoDecides(c)
	if p.CanDecide {
		p.FormToken = h.cfg.Signer.FormToken(token)
		p.offerEditSignIn(c, token, g, me)
	}
	p.Notice = fmt.Sprintf("Nothing was decided. Editing a call needs %[1]s signed in: this link by itself approves or refuses only the call as asked. To edit it, sign in as %[1]s; the sign-in link brings this browser back here.", c.Owner)
	p.NoticeClass = "warn"
	h.render(w, r, http.StatusForbidden, "approval.html", p)
}

// offerEditSignIn sets the page of a pending step that its link lets
// decide with nobody signed in to offer the sign-in to edit, instead of the edit.
func (p *page) offerEditSignIn(c link.Claims, token string, g gate, me session.Session) {
	if c.Kind == link.KindStep && p.Step != nil && p.Step.Edit.Editable && editNeedsSignIn(g, me) {
		p.EditSignInAs, p.Next = c.Owner, "a/"+token
	}
}

func (h *Handler) badForm(w http.ResponseWriter, r *http.Request, why string) {
	infoOf(r).outcome = "bad_form"
	h.message(w, r, http.StatusBadRequest, messageView{
		chrome: chrome{Title: "Not decided"}, Heading: "Nothing was decided", Notice: why + " Go back and try again.", NoticeClass: "error",
	})
}

// sameOrigin refuses a POST a browser marks as coming from another site
// (Sec-Fetch-Site), or whose Origin names another origin than the pages'
// own: BaseURL, or without one the origin the request was sent to (behind
// API Gateway the proxy event's domain name, which the adapter puts in the
// request URL; X-Forwarded-Host is not trusted), so the check is never off.
// The rule is sameorigin.Post's.
func (h *Handler) sameOrigin(r *http.Request) bool {
	return sameorigin.Post(r, h.ownOrigin(r))
}

// ownOrigin is the origin the pages are served from: BaseURL's, or the
// request's own scheme and host when no BaseURL is configured.
func (h *Handler) ownOrigin(r *http.Request) string {
	if h.cfg.BaseURL != "" {
		return sameorigin.Of(h.cfg.BaseURL)
	}
	scheme := r.URL.Scheme
	if scheme == "" {
		scheme = "http"
		if r.TLS != nil {
			scheme = "https"
		}
	}
	return scheme + "://" + r.Host
}
