package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/useprickle/prickle/shared/auth/session"
	"github.com/useprickle/prickle/shared/domain/event"
	"github.com/useprickle/prickle/shared/team"
)

// chrome is what every page's layout (templates/head.html) shows: the
// title, the relative path to the site root, and who is signed in.
type chrome struct {
	Title string
	Root  string // "../" per path segment, so pages work under an API Gateway stage path
	Me    string // the signed-in owner, empty when nobody is
	CSRF  string // form token of the session, for sign-out and decisions
	// Public pages (the tool reference) may be indexed and cached when nobody is signed in.
	Public bool
	// Bare pages (the approval pages, opened from a message, and the dev
	// outbox) show the brand alone, without the site navigation.
	Bare bool
}

func (c *chrome) base() *chrome { return c }

type based interface{ base() *chrome }

// rootOf is the relative path from a request path to the site root.
func rootOf(path string) string {
	n := strings.Count(strings.TrimPrefix(path, "/"), "/")
	if n == 0 {
		return "./"
	}
	return strings.Repeat("../", n)
}

// validOwnerName checks a slug as the seed's pattern
// ^[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9])){0,38}$ does (owner names and project
// slugs): RE2 has no lookahead, so by hand.
func validOwnerName(s string) bool {
	if len(s) == 0 || len(s) > 39 || s[0] == '-' || s[len(s)-1] == '-' || strings.Contains(s, "--") {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

type signInView struct {
	chrome
	Heading, Notice, NoticeClass string
	Owner                        string // the owner a link signs in
	Sent                         bool
	FormToken                    string
	Until                        string
}

// session returns the signed-in owner, if any: a valid cookie whose session
// the store still records. A store failure is logged and signs nobody in.
func (h *Handler) session(r *http.Request) (session.Session, bool) {
	if h.keys == nil {
		return session.Session{}, false
	}
	s, ok, err := h.keys.From(r.Context(), h.cfg.Store, r, h.now())
	if err != nil {
		h.cfg.Log.ErrorContext(r.Context(), "session check failed", "error", err.Error())
	}
	return s, ok
}

// signInForm is GET /signin: the owner types its name and gets a link.
func (h *Handler) signInForm(w http.ResponseWriter, r *http.Request) {
	v := &signInView{chrome: chrome{Title: "Sign in"}, Heading: "Sign in to Prickle"}
	if s, ok := h.session(r); ok {
		v.Me, v.CSRF = s.Owner, h.keys.FormToken(s)
	}
	h.render(w, r, http.StatusOK, "signin.html", v)
}

// sendSignIn is POST /signin: it sends a sign-in link where it reaches the
// owner alone (email, a Slack direct message). The answer is the same whether or not the owner exists, so the
// form does not tell who is an owner.
func (h *Handler) sendSignIn(w http.ResponseWriter, r *http.Request) {
	v := &signInView{chrome: chrome{Title: "Check your email or Slack DMs"}, Heading: "Check your email or Slack DMs"}
	if !h.sameOrigin(r) {
		infoOf(r).outcome = "cross_site"
		v.Heading, v.Notice, v.NoticeClass = "Sign in from Prickle's page", "This form was sent from another site, so no link was sent.", "error"
		h.render(w, r, http.StatusForbidden, "signin.html", v)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 8<<10)
	if err := r.ParseForm(); err != nil {
		v.Heading, v.Notice, v.NoticeClass = "Sign in to Prickle", "The form could not be read. Try again.", "error"
		h.render(w, r, http.StatusBadRequest, "signin.html", v)
		return
	}
	name := strings.ToLower(strings.TrimSpace(r.PostForm.Get("owner")))
	if !validOwnerName(name) {
		infoOf(r).outcome = "bad_form"
		v.Heading, v.Notice, v.NoticeClass = "Sign in to Prickle", "Type your owner name: lowercase letters, digits and single hyphens, like alice.", "error"
		h.render(w, r, http.StatusBadRequest, "signin.html", v)
		return
	}
	if limit, err := h.allowSignIn(r.Context(), name, session.Client(r)); err != nil || limit != session.WithinLimits {
		if err != nil {
			h.cfg.Log.ErrorContext(r.Context(), "sign-in rate check failed", "error", err.Error())
		}
		infoOf(r).outcome = "rate_limited"
		asked := map[session.SignInLimit]string{
			session.ClientLimit:         "from your network",
			session.NameFromClientLimit: "for " + name + " from your network",
			session.NameLimit:           "for " + name,
		}[limit]
		if asked == "" {
			asked = "for " + name // the check failed: refuse as the name's bound does
		}
		v.Heading, v.Notice, v.NoticeClass = "Sign in to Prickle", fmt.Sprintf("Too many sign-in links were asked %s in the last minutes. Wait up to %d minutes, or use a link already sent.", asked, int(session.SignInWindow/time.Minute)), "warn"
		h.render(w, r, http.StatusTooManyRequests, "signin.html", v)
		return
	}
	infoOf(r).outcome = "link_requested"
	rememberNext(w, r, r.PostForm.Get("next"))
	if err := h.sendSignInLink(r.Context(), name); err != nil {
		h.cfg.Log.ErrorContext(r.Context(), "sign-in link not sent", "owner", name, "error", err.Error())
	}
	v.Sent = true
	v.Notice, v.NoticeClass = fmt.Sprintf("If %s is an owner here, a sign-in link is on its way to their email, or as a Slack direct message (never to a channel). It works once, for %d minutes.", name, int(session.LinkLifetime/time.Minute)), "ok"
	h.render(w, r, http.StatusOK, "signin.html", v)
}

// allowSignIn applies the per-client and per-name bounds on sign-in links.
func (h *Handler) allowSignIn(ctx context.Context, name, client string) (session.SignInLimit, error) {
	return h.cfg.Store.AllowSignInRequest(ctx, name, client, h.now())
}

// sendSignInLink asks notify, over the event bus, to send the owner a
// sign-in link: only notify may send email, and it mints the link itself
// so no credential travels on the bus. An unknown owner gets nothing.
func (h *Handler) sendSignInLink(ctx context.Context, name string) error {
	if h.cfg.Service == nil || h.cfg.Service.Events == nil {
		return errors.New("sign-in is not configured: no event bus to reach notify")
	}
	return h.cfg.Service.Events.Publish(ctx, event.ForSignIn(name, team.RandomID(""), h.now()))
}

// signInToken checks the sign-in link in the path; on failure it has written the page.
func (h *Handler) signInToken(w http.ResponseWriter, r *http.Request, use bool) (session.Claims, string, bool) {
	token := r.PathValue("token")
	if h.keys == nil {
		h.failed(w, r, errors.New("sign-in is not configured"))
		return session.Claims{}, token, false
	}
	var c session.Claims
	var err error
	if use {
		c, err = h.keys.UseSignIn(r.Context(), h.cfg.Store, token, h.now())
	} else {
		c, err = h.keys.CheckSignIn(token, h.now())
	}
	v := &signInView{chrome: chrome{Title: "Sign-in link"}}
	switch {
	case err == nil:
		return c, token, true
	case errors.Is(err, session.ErrExpired):
		infoOf(r).outcome = "expired"
		v.Heading, v.Notice, v.NoticeClass = "This sign-in link has expired", fmt.Sprintf("Sign-in links work for %d minutes. Ask for a new one below.", int(session.LinkLifetime/time.Minute)), "warn"
		h.render(w, r, http.StatusGone, "signin.html", v)
	case errors.Is(err, session.ErrUsed):
		infoOf(r).outcome = "used"
		v.Heading, v.Notice, v.NoticeClass = "This sign-in link was already used", "Each link signs in once. Ask for a new one below.", "warn"
		h.render(w, r, http.StatusGone, "signin.html", v)
	case errors.Is(err, session.ErrInvalid):
		infoOf(r).outcome = "tampered"
		v.Heading, v.Notice, v.NoticeClass = "This sign-in link is not valid", "It was changed or was not issued by Prickle. Ask for a new one below.", "error"
		h.render(w, r, http.StatusForbidden, "signin.html", v)
	default:
		h.failed(w, r, err)
	}
	return c, token, false
}

// showSignIn is GET /signin/{token}: a button, never a sign-in (mail
// scanners and Slack unfurlers fetch links).
func (h *Handler) showSignIn(w http.ResponseWriter, r *http.Request) {
	c, token, ok := h.signInToken(w, r, false)
	if !ok {
		return
	}
	infoOf(r).outcome = "shown"
	h.render(w, r, http.StatusOK, "signin.html", &signInView{
		chrome: chrome{Title: "Sign in as " + c.Owner}, Heading: "Sign in as " + c.Owner,
		Owner: c.Owner, FormToken: h.keys.SignInFormToken(token), Until: c.Expires.UTC().Format(time.RFC3339),
	})
}

// signIn is POST /signin/{token}: it uses the link once and sets the session cookie.
func (h *Handler) signIn(w http.ResponseWriter, r *http.Request) {
	if !h.sameOrigin(r) {
		infoOf(r).outcome = "cross_site"
		h.render(w, r, http.StatusForbidden, "signin.html", &signInView{chrome: chrome{Title: "Refused"},
			Heading: "Sign in from the link's page", Notice: "This form was sent from another site, so nobody was signed in.", NoticeClass: "error"})
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 8<<10)
	if err := r.ParseForm(); err != nil || h.keys == nil || !h.keys.CheckSignInFormToken(r.PathValue("token"), r.PostForm.Get("csrf")) {
		infoOf(r).outcome = "bad_csrf"
		h.render(w, r, http.StatusForbidden, "signin.html", &signInView{chrome: chrome{Title: "Refused"},
			Heading: "Sign in from the link's page", Notice: "This form did not come from the sign-in page. Open the link and press its button.", NoticeClass: "error"})
		return
	}
	c, _, ok := h.signInToken(w, r, true)
	if !ok {
		return
	}
	ck, err := h.keys.Start(r.Context(), h.cfg.Store, r, c.Owner, c.Via, h.now())
	if err != nil {
		h.failed(w, r, err)
		return
	}
	http.SetCookie(w, ck)
	infoOf(r).outcome = "signed_in"
	w.Header().Set("Location", rootOf(r.URL.Path)+takeNext(w, r))
	w.WriteHeader(http.StatusSeeOther)
}

// signedIn returns the session, or sends the browser to sign in (pages) or
// answers 401 (fragments) and returns false.
func (h *Handler) signedIn(w http.ResponseWriter, r *http.Request, fragment bool) (session.Session, bool) {
	s, ok := h.session(r)
	if ok {
		infoOf(r).owner = s.Owner
		return s, true
	}
	infoOf(r).outcome = "not_signed_in"
	if fragment {
		w.Header().Set("Cache-Control", "no-store")
		http.Error(w, "sign in first", http.StatusUnauthorized)
		return s, false
	}
	w.Header().Set("Location", rootOf(r.URL.Path)+"signin")
	w.WriteHeader(http.StatusSeeOther)
	return s, false
}

// projectOf loads a project the owner may see (team.OwnerProject); a slug
// that could name no project is ErrNotFound before anything is read.
func (h *Handler) projectOf(ctx context.Context, owner, slug string) (team.Project, []team.Agent, error) {
	if !validOwnerName(slug) {
		return team.Project{}, nil, team.ErrNotFound
	}
	return team.OwnerProject(ctx, h.cfg.Store, owner, slug)
}

// lookupFailed answers a signed-in page whose lookup failed: notFound for
// what does not exist or the owner may not see, else failed. It says
// whether it answered (err was not nil).
func (h *Handler) lookupFailed(w http.ResponseWriter, r *http.Request, me session.Session, err error) bool {
	switch {
	case errors.Is(err, team.ErrNotFound):
		h.notFound(w, r, me)
	case err != nil:
		h.failed(w, r, err)
	default:
		return false
	}
	return true
}

// notFound is the one answer for what the owner may not see or what does not exist.
func (h *Handler) notFound(w http.ResponseWriter, r *http.Request, me session.Session) {
	infoOf(r).outcome = "not_found"
	v := &messageView{chrome: chrome{Title: "Not found", Me: me.Owner}, Heading: "Not found",
		Notice: "There is no such page among the projects your agents belong to.", NoticeClass: "warn"}
	if me.Owner != "" {
		v.CSRF = h.keys.FormToken(me)
	}
	h.render(w, r, http.StatusNotFound, "room-message.html", v)
}

type homeView struct {
	chrome
	Projects []team.Project
}

// home is GET /: the signed-in owner's projects, or the way to sign in.
func (h *Handler) home(w http.ResponseWriter, r *http.Request) {
	s, ok := h.session(r)
	if !ok {
		h.signInForm(w, r)
		return
	}
	infoOf(r).owner = s.Owner
	slugs, err := h.cfg.Store.OwnerProjects(r.Context(), s.Owner)
	if err != nil {
		h.failed(w, r, err)
		return
	}
	v := &homeView{chrome: chrome{Title: "Your projects", Me: s.Owner, CSRF: h.keys.FormToken(s)}}
	for _, slug := range slugs {
		p, err := h.cfg.Store.Project(r.Context(), slug)
		if errors.Is(err, team.ErrNotFound) {
			continue
		}
		if err != nil {
			h.failed(w, r, err)
			return
		}
		v.Projects = append(v.Projects, p)
	}
	h.render(w, r, http.StatusOK, "home.html", v)
}
