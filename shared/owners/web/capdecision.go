package web

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/useprickle/prickle/shared/auth/link"
	"github.com/useprickle/prickle/shared/domain/audit"
	"github.com/useprickle/prickle/shared/domain/modelspend"
	"github.com/useprickle/prickle/shared/domain/task"
)

// The cap page: the link of a "cap reached" message. GET /c/{token} shows
// the agent's day and, while the day is undecided, Raise / Leave; it
// changes nothing. POST /c/{token} decides, once, under the same rules as
// an approval link (signature, expiry, who may decide, the page's form
// token, same origin), then 303 to the GET.

// capPage is what the cap page shows.
type capPage struct {
	chrome
	Heading, Notice, NoticeClass  string
	Agent, Day, Spent, Cap, Limit string
	Decided                       string
	Raise                         string
	CanDecide                     bool
	FormToken                     string
	WhoDecides                    string
	SignInAs, Next                string
}

// capClaims verifies a cap link; on false it has written the answer.
func (h *Handler) capClaims(w http.ResponseWriter, r *http.Request) (link.Claims, string, bool) {
	c, token, ok := h.verify(w, r)
	if ok && c.Kind != link.KindCap {
		infoOf(r).outcome = "not_a_cap_link"
		h.message(w, r, http.StatusNotFound, messageView{chrome: chrome{Title: "Not found"}, Heading: "Nothing to decide here",
			Notice: "This link is not about a model-spend cap.", NoticeClass: "warn"})
		return c, token, false
	}
	return c, token, ok
}

// loadCap builds the page of the agent's day as it stands now.
func (h *Handler) loadCap(r *http.Request, c link.Claims) (capPage, error) {
	if h.cfg.Spend == nil {
		return capPage{}, errNoSpend
	}
	a, err := h.cfg.Spend.Spend(r.Context(), c.Agent)
	if err != nil {
		return capPage{}, err
	}
	st := a.Status()
	p := capPage{chrome: chrome{Title: fmt.Sprintf("Model spend of %s", c.Agent), Bare: true}, Agent: c.Agent, Day: c.Day,
		Heading: fmt.Sprintf("%s reached its daily model-spend cap", c.Agent), Cap: "none", Limit: "—", WhoDecides: whoDecides(c)}
	if st.Day.Day != c.Day {
		p.Decided = fmt.Sprintf("This asked about %s; a new UTC day has begun and the cap applies afresh, so there is nothing to decide.", c.Day)
		return p, nil
	}
	p.Spent = st.Day.Cost.String()
	if st.Capped {
		p.Cap, p.Limit, p.Raise = st.Cap.PerDay.String(), st.Limit.String(), st.RaisedLimit().String()
	}
	switch {
	case st.Day.Decision != "":
		what := "left as it is: new runs wait until 00:00 UTC"
		if st.Day.Decision == modelspend.Raised {
			what = fmt.Sprintf("raised for today to %s %s", st.Day.RaisedTo, modelspend.Unit)
		}
		p.Decided = fmt.Sprintf("Already decided by %s at %s: %s.", st.Day.DecidedBy, stamp(*st.Day.DecidedAt), what)
	case !st.Capped:
		p.Decided = fmt.Sprintf("%s has no daily model-spend cap now, so there is nothing to decide.", c.Agent)
	default:
		p.CanDecide = true
	}
	return p, nil
}

// showCap is GET /c/{token}.
func (h *Handler) showCap(w http.ResponseWriter, r *http.Request) {
	c, token, g, _, ok := h.openLink(w, r, h.capClaims)
	if !ok {
		return
	}
	p, err := h.loadCap(r, c)
	if err != nil {
		h.failed(w, r, err)
		return
	}
	switch {
	case p.CanDecide && g == gateSignIn:
		p.CanDecide, p.SignInAs, p.Next = false, c.Owner, "c/"+token
	case p.CanDecide:
		p.FormToken = h.cfg.Signer.FormToken(token)
	case r.URL.Query().Get("done") == "1" && p.Decided != "":
		p.Heading, p.Notice, p.NoticeClass = "Your decision is recorded", "Thank you. This link can decide nothing more.", "ok"
	}
	infoOf(r).outcome = "shown"
	h.render(w, r, http.StatusOK, "cap.html", &p)
}

// decideCap is POST /c/{token}.
func (h *Handler) decideCap(w http.ResponseWriter, r *http.Request) {
	c, token, me, ok := h.gatePost(w, r, "Decisions are made on the page", h.capClaims, func(c link.Claims, token, notice string) {
		p, err := h.loadCap(r, c)
		if err != nil {
			h.failed(w, r, err)
			return
		}
		p.CanDecide, p.SignInAs, p.Next = false, c.Owner, "c/"+token
		p.Notice, p.NoticeClass = notice, "warn"
		h.render(w, r, http.StatusForbidden, "cap.html", &p)
	})
	if !ok {
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	if err := r.ParseForm(); err != nil || !h.cfg.Signer.CheckFormToken(token, r.PostForm.Get("csrf")) {
		infoOf(r).outcome = "bad_csrf"
		h.message(w, r, http.StatusForbidden, messageView{chrome: chrome{Title: "Refused"}, Heading: "Decisions are made on the page",
			Notice: "This form did not come from the page, so nothing was decided. Open the link and use its buttons.", NoticeClass: "error"})
		return
	}
	var raise bool
	switch r.PostForm.Get("decision") {
	case "raise":
		raise = true
	case "leave":
	default:
		h.badForm(w, r, "Choose Raise or Leave it.")
		return
	}
	if h.cfg.Spend == nil {
		h.failed(w, r, errNoSpend)
		return
	}
	_, err := h.cfg.Spend.Decide(r.Context(), c.Owner, c.Agent, c.Day, raise, decidedVia(audit.ViaLink, me))
	var refusal *task.Refusal
	if errors.As(err, &refusal) {
		infoOf(r).outcome = "refused_by_rules"
		p, lerr := h.loadCap(r, c)
		if lerr != nil {
			p = capPage{chrome: chrome{Title: "Not decided", Bare: true}, Heading: "Nothing was decided"}
		}
		p.CanDecide, p.Notice, p.NoticeClass = false, "Nothing was decided: "+refusal.Msg+".", "warn"
		h.render(w, r, http.StatusConflict, "cap.html", &p)
		return
	}
	if err != nil {
		h.failed(w, r, fmt.Errorf("decide the cap of %s on %s: %w", c.Agent, c.Day, err))
		return
	}
	infoOf(r).outcome = map[bool]string{true: "raised", false: "left"}[raise]
	w.Header().Set("Location", "?done=1")
	w.WriteHeader(http.StatusSeeOther)
}
