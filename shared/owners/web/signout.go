package web

import (
	"context"
	"fmt"
	"net/http"

	"github.com/useprickle/prickle/shared/auth/oauthstate"
	"github.com/useprickle/prickle/shared/auth/session"
)

// signOut is POST /signout: it ends this browser's session on the server,
// so a copy of the cookie opens nothing either, and sends the browser to sign in.
func (h *Handler) signOut(w http.ResponseWriter, r *http.Request) {
	s, ok := h.signOutForm(w, r)
	if !ok {
		return
	}
	ck := session.Cleared(r)
	if s.Owner != "" {
		var err error
		if ck, err = session.End(r.Context(), h.cfg.Store, r, s); err != nil {
			h.failed(w, r, err)
			return
		}
	}
	http.SetCookie(w, ck)
	infoOf(r).outcome = "signed_out"
	w.Header().Set("Location", "signin")
	w.WriteHeader(http.StatusSeeOther)
}

type signedOutView struct {
	chrome
	Owner string
	// Disconnected are the clients the owner's sessions had connected, ended now.
	Disconnected []oauthstate.Connection
}

// signOutEverywhere is POST /signout-everywhere: it ends every session of
// the signed-in owner, in every browser, then disconnects every client
// those sessions connected (the OAuth grants: their refresh and access
// tokens end at once), and shows what it ended and what it did not.
// Sessions end first, so no session of the owner can connect a client
// while the grants are being revoked.
func (h *Handler) signOutEverywhere(w http.ResponseWriter, r *http.Request) {
	s, ok := h.signOutForm(w, r)
	if !ok {
		return
	}
	if s.Owner == "" {
		http.SetCookie(w, session.Cleared(r))
		w.Header().Set("Location", "signin")
		w.WriteHeader(http.StatusSeeOther)
		return
	}
	ck, err := session.EndAll(r.Context(), h.cfg.Store, r, s)
	if err != nil {
		h.failed(w, r, err)
		return
	}
	http.SetCookie(w, ck)
	v := &signedOutView{chrome: chrome{Title: "Signed out everywhere"}, Owner: s.Owner}
	v.Disconnected, err = h.disconnectAll(r.Context(), s.Owner)
	if err != nil {
		infoOf(r).outcome = "error"
		h.cfg.Log.ErrorContext(r.Context(), "sign out everywhere: clients not all disconnected", "owner", s.Owner, "error", err.Error())
		h.message(w, r, http.StatusInternalServerError, messageView{chrome: chrome{Title: "Not all disconnected"}, Heading: "Signed out, but not everything was disconnected",
			Notice:      "Every session of " + s.Owner + " has ended, but some connected applications may still be connected. Sign in again and press Sign out everywhere once more, or Disconnect them on Connected applications.",
			NoticeClass: "error"})
		return
	}
	infoOf(r).outcome = "signed_out_everywhere"
	h.cfg.Log.InfoContext(r.Context(), "signed out everywhere", "owner", s.Owner, "clients_disconnected", len(v.Disconnected))
	h.render(w, r, http.StatusOK, "signedout.html", v)
}

// disconnectAll revokes every live OAuth grant of owner and returns them.
func (h *Handler) disconnectAll(ctx context.Context, owner string) ([]oauthstate.Connection, error) {
	grants, err := h.cfg.Store.OwnerOAuthConnections(ctx, owner)
	if err != nil {
		return nil, fmt.Errorf("connected applications of %s: %w", owner, err)
	}
	var ended []oauthstate.Connection
	for _, g := range grants {
		if g.Revoked {
			continue
		}
		if err := h.cfg.Store.RevokeOAuthConnection(ctx, g.ID); err != nil {
			return ended, fmt.Errorf("disconnect %s of %s: %w", g.Agent, owner, err)
		}
		ended = append(ended, g)
	}
	return ended, nil
}

// signOutForm checks a sign-out form: a session whose form token and origin
// are right, or none (the cookie is cleared anyway). On a forged form it
// writes the 403 page and returns false.
func (h *Handler) signOutForm(w http.ResponseWriter, r *http.Request) (session.Session, bool) {
	s, ok := h.session(r)
	if !ok {
		return session.Session{}, true
	}
	r.Body = http.MaxBytesReader(w, r.Body, 8<<10)
	if err := r.ParseForm(); err != nil || !h.sameOrigin(r) || !h.keys.CheckFormToken(s, r.PostForm.Get("csrf")) {
		infoOf(r).outcome = "bad_csrf"
		h.message(w, r, http.StatusForbidden, messageView{chrome: chrome{Title: "Refused"}, Heading: "Not signed out",
			Notice: "This form did not come from Prickle's page. Use the Sign out button.", NoticeClass: "error"})
		return session.Session{}, false
	}
	infoOf(r).owner = s.Owner
	return s, true
}
