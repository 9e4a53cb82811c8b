package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/auth/oauthstate"
	"github.com/useprickle/prickle/shared/auth/session"
)

// devicePage is GET /oauth/device: the code (from the runner's link, or
// typed), the runner's name, the owner's agents and Allow/Deny. It decides
// nothing; only POST does.
func (s *Server) devicePage(w http.ResponseWriter, r *http.Request) {
	code := normalUserCode(r.URL.Query().Get("code"))
	me, ok := s.session(r)
	if !ok {
		next := "oauth/device"
		if code != "" {
			next += "?code=" + formatUserCode(code)
		}
		s.page(w, r, http.StatusOK, "devicesignin.html", pageView{Title: "Sign in to join a runner", Code: formatUserCode(code), Next: next})
		return
	}
	v, err := s.deviceView(r.Context(), me, code)
	if err != nil {
		s.failed(w, r, err)
		return
	}
	status := http.StatusOK
	if code != "" {
		if status, err = s.lookUpCode(r.Context(), me.Owner, code, &v, false); err != nil {
			s.failed(w, r, err)
			return
		}
	}
	s.page(w, r, status, "device.html", v)
}

func (s *Server) deviceView(ctx context.Context, me session.Session, code string) (pageView, error) {
	agents, _, err := s.ownerAgents(ctx, me.Owner)
	if err != nil {
		return pageView{}, err
	}
	v := pageView{Title: "Join a runner", Me: me.Owner, CSRF: s.cfg.Keys.FormToken(me), Code: formatUserCode(code),
		Minutes: int(DeviceCodeLifespan / time.Minute)}
	for i, a := range agents {
		v.Agents = append(v.Agents, agentChoice{ID: a.ID, Projects: strings.Join(a.Projects, ", "), Checked: i == 0})
	}
	return v, nil
}

// lookUpCode counts an owner's attempt on a code (and, deciding, the code's
// own attempts), then reads it: a live code's runner name goes into v; an
// unknown, used or expired code, or an attempt past a bound, is said in v's
// notice with the status to answer.
func (s *Server) lookUpCode(ctx context.Context, owner, code string, v *pageView, deciding bool) (int, error) {
	uh := identity.Hash(code)
	counters := []struct {
		key string
		max int
	}{{"device#owner#" + owner, CodeAttemptsPerOwner}}
	if deciding {
		counters = append(counters, struct {
			key string
			max int
		}{"device#code#" + uh, AttemptsPerCode})
	}
	for _, c := range counters {
		ok, err := s.cfg.Device.Store.AllowOAuthAttempt(ctx, c.key, c.max, DeviceRateWindow, s.cfg.Now())
		if err != nil {
			return 0, err
		}
		if !ok {
			v.Notice, v.NoticeClass = fmt.Sprintf("Too many tries: at most %d codes per owner and %d decisions per code in %d minutes. Try again later.",
				CodeAttemptsPerOwner, AttemptsPerCode, int(DeviceRateWindow/time.Minute)), "error"
			return http.StatusTooManyRequests, nil
		}
	}
	rec, err := s.cfg.Grants.OAuthRecord(ctx, oauthstate.KindUserCode, uh)
	if err != nil && !errors.Is(err, oauthstate.ErrNotFound) {
		return 0, err
	}
	if err != nil || !rec.Active || !s.cfg.Now().Before(rec.Expires) {
		v.Notice, v.NoticeClass = fmt.Sprintf("This code is unknown, used or expired (codes last %d minutes and work once). Check the code your runner shows, or run prickle-runner login again.",
			int(DeviceCodeLifespan/time.Minute)), "error"
		return http.StatusGone, nil
	}
	var d deviceRequest
	_ = json.Unmarshal(rec.Request, &d)
	v.RunnerName, v.DeviceHash = runnerName(d.Name), rec.Family
	return http.StatusOK, nil
}

// deviceDecide is POST /oauth/device: same-origin, with the session's form
// token. Allow binds the runner's device code to one of the owner's own
// agents; the user code works once either way.
func (s *Server) deviceDecide(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	me, ok := s.ownerForm(w, r, "This decision did not come from Prickle's page, or you are not signed in. No runner was joined.")
	if !ok {
		return
	}
	code := normalUserCode(r.PostForm.Get("code"))
	v, err := s.deviceView(ctx, me, code)
	if err != nil {
		s.failed(w, r, err)
		return
	}
	if code == "" {
		v.Notice, v.NoticeClass = "Type the code your runner shows, like BCDF-GHJK.", "error"
		s.page(w, r, http.StatusBadRequest, "device.html", v)
		return
	}
	status, err := s.lookUpCode(ctx, me.Owner, code, &v, true)
	if err != nil {
		s.failed(w, r, err)
		return
	}
	if status != http.StatusOK {
		s.page(w, r, status, "device.html", v)
		return
	}
	allow := r.PostForm.Get("decision") == decisionAllow
	agent := r.PostForm.Get("agent")
	if allow && !slices.ContainsFunc(v.Agents, func(a agentChoice) bool { return a.ID == agent }) {
		// Another owner's agent, or none: nothing is used, the owner chooses again.
		v.Notice, v.NoticeClass = "Choose one of your own agents.", "error"
		s.page(w, r, http.StatusBadRequest, "device.html", v)
		return
	}
	if err := s.cfg.Grants.DeactivateOAuthRecord(ctx, oauthstate.KindUserCode, identity.Hash(code)); err != nil {
		if errors.Is(err, oauthstate.ErrInactive) || errors.Is(err, oauthstate.ErrNotFound) {
			s.page(w, r, http.StatusGone, "error.html", pageView{Title: "Start again", Notice: "This code was used already: it works once. Run prickle-runner login again."})
			return
		}
		s.failed(w, r, err)
		return
	}
	dec := oauthstate.Record{Kind: oauthstate.KindDeviceDecision, Hash: v.DeviceHash, Family: decisionDeny, Active: true,
		Expires: s.cfg.Now().Add(DeviceCodeLifespan)}
	if allow {
		dec.Family = decisionAllow
		dec.Request, _ = json.Marshal(deviceRequest{Name: v.RunnerName, Owner: me.Owner, Agent: agent})
	}
	if err := s.cfg.Grants.PutOAuthRecord(ctx, dec); err != nil {
		s.failed(w, r, err)
		return
	}
	if !allow {
		s.cfg.Log.InfoContext(ctx, "runner denied", "owner", me.Owner)
		s.page(w, r, http.StatusOK, "devicedone.html", pageView{Title: "Not joined", Me: me.Owner, RunnerName: v.RunnerName,
			Notice: "Denied: the runner gets no token. If you did not start it, nothing else is needed."})
		return
	}
	s.cfg.Log.InfoContext(ctx, "runner allowed", "owner", me.Owner, "agent", agent)
	s.page(w, r, http.StatusOK, "devicedone.html", pageView{Title: "Runner joined", Me: me.Owner, RunnerName: v.RunnerName, Agent: agent, Allowed: true,
		Notice: fmt.Sprintf("Allowed: the runner on %s now receives a token of %s. You see it, and can revoke it, on the owners page of each of that agent's projects.", v.RunnerName, agent)})
}
