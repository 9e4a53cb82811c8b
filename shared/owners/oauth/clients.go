package oauth

import (
	"errors"
	"net/http"

	"github.com/useprickle/prickle/shared/auth/oauthstate"
)

// clientsPage is GET /oauth/clients: the owner's connected clients.
func (s *Server) clientsPage(w http.ResponseWriter, r *http.Request) {
	me, ok := s.session(r)
	if !ok {
		w.Header().Set("Location", "../signin")
		w.WriteHeader(http.StatusSeeOther)
		return
	}
	grants, err := s.cfg.Grants.OwnerOAuthConnections(r.Context(), me.Owner)
	if err != nil {
		s.failed(w, r, err)
		return
	}
	live := grants[:0]
	for _, g := range grants {
		if !g.Revoked {
			live = append(live, g)
		}
	}
	s.page(w, r, http.StatusOK, "clients.html", pageView{Title: "Connected applications", Me: me.Owner, CSRF: s.cfg.Keys.FormToken(me), Grants: live})
}

// revoke is POST /oauth/clients/{grant}/revoke: the grant's tokens end at once.
func (s *Server) revoke(w http.ResponseWriter, r *http.Request) {
	me, ok := s.ownerForm(w, r, "This form did not come from Prickle's page. Nothing was revoked.")
	if !ok {
		return
	}
	g, err := s.cfg.Grants.OAuthConnection(r.Context(), r.PathValue("grant"))
	if errors.Is(err, oauthstate.ErrNotFound) || (err == nil && g.Owner != me.Owner) {
		s.page(w, r, http.StatusNotFound, "error.html", pageView{Title: "Not found", Notice: "You have no such connected application."})
		return
	}
	if err == nil {
		err = s.cfg.Grants.RevokeOAuthConnection(r.Context(), g.ID)
	}
	if err != nil {
		s.failed(w, r, err)
		return
	}
	s.cfg.Log.InfoContext(r.Context(), "client disconnected", "owner", me.Owner, "agent", g.Agent)
	w.Header().Set("Location", "../../clients")
	w.WriteHeader(http.StatusSeeOther)
}
