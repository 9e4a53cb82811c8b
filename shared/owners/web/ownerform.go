package web

import (
	"net/http"

	"github.com/useprickle/prickle/shared/auth/session"
	"github.com/useprickle/prickle/shared/team"
)

// A formGate is what a signed-in owner's POST form is checked with: the
// bound of its body, and what the 403 page says when it is forged.
type formGate struct {
	max             int64
	heading, notice string
}

// The forms a signed-in owner posts on Prickle's pages.
var (
	projectForm   = formGate{16 << 10, "Nothing was changed", "This form did not come from Prickle's page. Open the page and use its buttons."}
	boardTaskForm = formGate{maxNewTaskForm, "Nothing was created", "This form did not come from Prickle's board. Open the board and use its form."}
	decideForm    = formGate{maxDecideForm, "Nothing was decided", "This form did not come from the task page. Open the task and use its buttons."}
)

// ownerForm checks a signed-in owner's POST: a bounded body, the same
// origin and the session's form token. On false it has written the 403.
func (h *Handler) ownerForm(w http.ResponseWriter, r *http.Request, me session.Session, g formGate) bool {
	r.Body = http.MaxBytesReader(w, r.Body, g.max)
	if err := r.ParseForm(); err != nil || !h.sameOrigin(r) || !h.keys.CheckFormToken(me, r.PostForm.Get("csrf")) {
		infoOf(r).outcome = "bad_csrf"
		h.render(w, r, http.StatusForbidden, "room-message.html", &messageView{chrome: chrome{Title: "Refused", Me: me.Owner, CSRF: h.keys.FormToken(me)},
			Heading: g.heading, Notice: g.notice, NoticeClass: "error"})
		return false
	}
	return true
}

// projectPost gates an owner's POST to /p/{project}: projectPage's checks,
// then ownerForm's (projectForm); missing, when not nil, is what the handler
// lacks to act (errNoService, errNoSpend) and fails the request after them.
// On false it has written the answer.
func (h *Handler) projectPost(w http.ResponseWriter, r *http.Request, missing error) (session.Session, team.Project, bool) {
	me, p, _, ok := h.projectPage(w, r)
	if !ok || !h.ownerForm(w, r, me, projectForm) {
		return me, p, false
	}
	if missing != nil {
		h.failed(w, r, missing)
		return me, p, false
	}
	return me, p, true
}
