package web

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/useprickle/prickle/shared/auth/link"
	"github.com/useprickle/prickle/shared/auth/session"
	"github.com/useprickle/prickle/shared/domain/audit"
)

// Who may decide with an approval link. A link names,
// signed, where it was delivered: an email reaches the owner alone, so the
// link decides by itself; a Slack channel is read by others, so its link
// decides only with its owner signed in (the page offers the sign-in and
// comes back). Whoever is signed in as another owner is refused, on any
// link. Slack's own buttons are checked by Slack member id (shared/owners/slack).
// Editing a step's call goes further than the call asked, so it needs the
// owner's session on any link (editNeedsSignIn): a forwarded or leaked email
// can approve the call as asked, never swap in another.
type gate int

const (
	gateOpen   gate = iota // the link may decide for this request
	gateSignIn             // a shared link, nobody signed in: sign in as its owner first
	gateOther              // signed in as another owner: refused
)

// linkGate applies the rule to a request; me is the signed-in owner's
// session, if any (its Owner is empty when nobody is signed in).
func (h *Handler) linkGate(r *http.Request, c link.Claims) (g gate, me session.Session) {
	s, ok := h.session(r)
	switch {
	case ok && s.Owner != c.Owner:
		return gateOther, s
	case ok:
		return gateOpen, s
	case c.Shared():
		return gateSignIn, session.Session{}
	}
	return gateOpen, session.Session{}
}

// editNeedsSignIn says whether an edit of the link's step needs a sign-in
// first: the link may decide (gateOpen) but nobody is signed in, which only
// an emailed link allows.
func editNeedsSignIn(g gate, me session.Session) bool { return g == gateOpen && me.Owner == "" }

// openLink reads a link page's token with read (h.verify, h.capClaims) and
// applies the rule to its GET: another owner signed in is refused here (ok
// false); g says whether the page may offer to decide, me who is signed in.
func (h *Handler) openLink(w http.ResponseWriter, r *http.Request, read func(http.ResponseWriter, *http.Request) (link.Claims, string, bool)) (c link.Claims, token string, g gate, me session.Session, ok bool) {
	if c, token, ok = read(w, r); !ok {
		return c, token, g, me, false
	}
	g, me = h.linkGate(r, c)
	if g == gateOther {
		h.otherOwner(w, r, c, me.Owner)
		return c, token, g, me, false
	}
	return c, token, g, me, true
}

// gatePost lets a link page's POST (POST /a/…, /c/…) through to deciding,
// or answers it (ok false): a form sent from another site is refused
// (heading names where decisions are made), then the token is read with read
// (h.verify, h.capClaims) and the rule applied. Another owner signed in is
// refused; a shared link whose owner is not signed in decides nothing, and
// show answers with the page again and notice (sign in as the owner, then decide).
func (h *Handler) gatePost(w http.ResponseWriter, r *http.Request, heading string, read func(http.ResponseWriter, *http.Request) (link.Claims, string, bool),
	show func(c link.Claims, token, notice string)) (c link.Claims, token string, me session.Session, ok bool) {
	if !h.sameOrigin(r) {
		infoOf(r).outcome = "cross_site"
		h.message(w, r, http.StatusForbidden, messageView{chrome: chrome{Title: "Refused"}, Heading: heading,
			Notice: "This form was sent from another site, so nothing was decided.", NoticeClass: "error"})
		return c, token, me, false
	}
	if c, token, ok = read(w, r); !ok {
		return c, token, me, false
	}
	g, me := h.linkGate(r, c)
	switch g {
	case gateOther:
		h.otherOwner(w, r, c, me.Owner)
		return c, token, me, false
	case gateSignIn:
		infoOf(r).outcome = "needs_sign_in"
		show(c, token, fmt.Sprintf("Nothing was decided: this link was shared, so it decides only with %[1]s signed in. Sign in as %[1]s, then decide.", c.Owner))
		return c, token, me, false
	}
	return c, token, me, true
}

// decisionOf reads a decide form (the approval page's, the task page's):
// approve or refuse, edit for an approval of the edited call, and the
// message, trimmed; problem, when not empty, says what is wrong with it.
func decisionOf(form url.Values) (approve, edit bool, msg, problem string) {
	switch form.Get("decision") {
	case "approve":
		approve = true
	case decisionEdit:
		approve, edit = true, true
	case "refuse":
	default:
		return false, false, "", "Choose Approve or Refuse."
	}
	msg = strings.TrimSpace(form.Get("message"))
	if utf8.RuneCountInString(msg) > MaxMessage {
		return false, false, "", fmt.Sprintf("The message is longer than %d characters.", MaxMessage)
	}
	return approve, edit, msg, ""
}

// decidedVia is how the audit trail records a decision made from where
// (audit.ViaLink, ViaPage, ViaOwners): with a session, also how that session
// was signed in, so a decision made by whoever held a session says so.
func decidedVia(where string, me session.Session) string {
	if me.Owner == "" {
		return where
	}
	return audit.SignedIn(where, me.SignedInBy())
}

// whoDecides is the rule as the approval page states it for this link.
func whoDecides(c link.Claims) string {
	switch c.Via {
	case link.ViaEmail:
		if c.Kind == link.KindStep {
			return fmt.Sprintf("Who may decide: this link was sent to %[1]s's email, so it approves or refuses the call as asked by itself; do not forward it. Editing the call needs %[1]s signed in to Prickle. Anyone signed in as another owner is refused.", c.Owner)
		}
		return fmt.Sprintf("Who may decide: this link was sent to %s's email, so it decides by itself; do not forward it. Anyone signed in to Prickle as another owner is refused.", c.Owner)
	case link.ViaSlack:
		return fmt.Sprintf("Who may decide: this link was posted to %[1]s's Slack channel, which others can read, so it decides only with %[1]s signed in to Prickle. Anyone signed in as another owner is refused; in Slack, only %[1]s's own clicks on the buttons decide.", c.Owner)
	}
	return fmt.Sprintf("Who may decide: this link does not say where it was sent (it is older than that rule), so it counts as shared and decides only with %s signed in to Prickle. Anyone signed in as another owner is refused.", c.Owner)
}

// otherOwner is the 403 page of a link opened by another signed-in owner:
// it shows nothing of what the link decides.
func (h *Handler) otherOwner(w http.ResponseWriter, r *http.Request, c link.Claims, me string) {
	infoOf(r).outcome, infoOf(r).owner = "other_owner", me
	h.message(w, r, http.StatusForbidden, messageView{
		chrome: chrome{Title: "Not yours to decide"}, Heading: fmt.Sprintf("This link is %s's to decide", c.Owner),
		Notice: fmt.Sprintf("You are signed in as %s. Only %s decides for %s's agents, so this page shows nothing and decides nothing. If you are %s, sign out and sign in as %s.",
			me, c.Owner, c.Owner, c.Owner, c.Owner),
		NoticeClass: "error",
	})
}

// nextCookie remembers, for the sign-in a shared approval link asked for,
// the page to come back to.
const nextCookie = "prickle_next"

// returnPath is what a return path may be, relative to the site root: an
// approval link's page or a cap link's (a token is base64url "." base64url),
// an OAuth consent page (the flow resumes after the sign-in link), or the
// device page of prickle-runner login, with its user code.
var returnPath = regexp.MustCompile(`^(?:[ac]/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+|oauth/consent/[A-Za-z0-9_-]{1,64}|oauth/device(?:\?code=[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4})?)$`)

// maxReturnPath bounds a remembered return path, as every stored input is bounded.
const maxReturnPath = 3000

func validReturn(next string) bool { return len(next) <= maxReturnPath && returnPath.MatchString(next) }

// rememberNext sets the return path of a sign-in, when it is one.
func rememberNext(w http.ResponseWriter, r *http.Request, next string) {
	if validReturn(next) {
		http.SetCookie(w, &http.Cookie{Name: nextCookie, Value: next, Path: "/", MaxAge: int(session.LinkLifetime.Seconds()),
			HttpOnly: true, Secure: !session.Loopback(r), SameSite: http.SameSiteLaxMode})
	}
}

// takeNext returns the remembered return path (empty when none) and forgets it.
func takeNext(w http.ResponseWriter, r *http.Request) string {
	ck, err := r.Cookie(nextCookie)
	if err != nil {
		return ""
	}
	http.SetCookie(w, &http.Cookie{Name: nextCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, Secure: !session.Loopback(r), SameSite: http.SameSiteLaxMode})
	if !validReturn(ck.Value) {
		return ""
	}
	return ck.Value
}
