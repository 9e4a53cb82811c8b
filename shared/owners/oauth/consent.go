package oauth

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ory/fosite"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/auth/oauthresource"
	"github.com/useprickle/prickle/shared/auth/oauthstate"
	"github.com/useprickle/prickle/shared/auth/session"
	"github.com/useprickle/prickle/shared/owners/layout"
	"github.com/useprickle/prickle/shared/owners/sameorigin"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/admin"
)

//go:embed templates/*.html
var templateFS embed.FS

// pageFuncs give the pages the numbers that are rules, from their constants.
var pageFuncs = template.FuncMap{"pendingMinutes": func() int { return int(PendingLifespan / time.Minute) }}

var pages = template.Must(layout.Parse(template.New("").Funcs(pageFuncs)).ParseFS(templateFS, "templates/*.html"))

// maxAuthorizeQuery bounds the authorization request kept while the owner signs in.
const maxAuthorizeQuery = 8 << 10

// agentName is the name part of a new agent (owner/<name>), as the seed's slug pattern.
var agentName = regexp.MustCompile(`^[a-z0-9](?:[a-z0-9-]{0,37}[a-z0-9])?$`)

// authorize is GET /oauth/authorize: fosite checks the client, the exact
// redirect URI and the parameters; PKCE S256 and the resource are checked
// here too, so nothing wrong waits for consent. An unknown client or an
// unregistered redirect URI gets a page here, never a redirect. The
// request is kept (hashed id, PendingLifespan) and the browser goes to the
// consent page, which needs the owner signed in.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if len(r.URL.RawQuery) > maxAuthorizeQuery {
		s.page(w, r, http.StatusBadRequest, "error.html", pageView{Title: "Request too long", Notice: "This authorization request is too long."})
		return
	}
	ar, err := s.provider.NewAuthorizeRequest(ctx, r)
	if err == nil {
		err = s.checkPKCEAndResource(ar)
	}
	if err != nil {
		s.authorizeError(w, r, ar, err)
		return
	}
	id, err := newSecret("")
	if err != nil {
		s.failed(w, r, err)
		return
	}
	rec := oauthstate.Record{Kind: KindPending, Hash: identity.Hash(id), Family: ar.GetID(), Active: true,
		Expires: s.cfg.Now().Add(PendingLifespan), Request: []byte(r.URL.RawQuery)}
	if err := s.cfg.Grants.PutOAuthRecord(ctx, rec); err != nil {
		s.failed(w, r, err)
		return
	}
	w.Header().Set("Location", "consent/"+id)
	w.WriteHeader(http.StatusSeeOther)
}

func (s *Server) checkPKCEAndResource(ar fosite.AuthorizeRequester) error {
	form := ar.GetRequestForm()
	if form.Get("code_challenge") == "" || form.Get("code_challenge_method") != "S256" {
		return fosite.ErrInvalidRequest.WithHint("PKCE is required: send code_challenge with code_challenge_method=S256.")
	}
	return s.checkResource(form)
}

// authorizeError redirects the error to the client only when the redirect
// URI was checked; otherwise the owner sees a page.
func (s *Server) authorizeError(w http.ResponseWriter, r *http.Request, ar fosite.AuthorizeRequester, err error) {
	s.logGrantError(r.Context(), "authorization refused", err)
	if ar != nil && ar.IsRedirectURIValid() {
		s.provider.WriteAuthorizeError(r.Context(), w, ar, err)
		return
	}
	msg := "The application's request could not be used."
	var rfc *fosite.RFC6749Error
	if errors.As(err, &rfc) {
		msg = rfc.GetDescription()
	}
	s.page(w, r, http.StatusBadRequest, "error.html", pageView{Title: "Not connected", Notice: msg})
}

// pending loads the authorization request behind a consent page and parses
// it again through fosite (the client may have changed since).
func (s *Server) pending(r *http.Request) (fosite.AuthorizeRequester, oauthstate.Client, string, error) {
	id := r.PathValue("id")
	if len(id) > 64 {
		return nil, oauthstate.Client{}, "", oauthstate.ErrNotFound
	}
	rec, err := s.cfg.Grants.OAuthRecord(r.Context(), KindPending, identity.Hash(id))
	if err != nil {
		return nil, oauthstate.Client{}, "", err
	}
	if !rec.Active || !s.cfg.Now().Before(rec.Expires) {
		return nil, oauthstate.Client{}, "", oauthstate.ErrInactive
	}
	q, err := url.ParseQuery(string(rec.Request))
	if err != nil {
		return nil, oauthstate.Client{}, "", fmt.Errorf("stored authorization request: %w", err)
	}
	ar, err := s.provider.NewAuthorizeRequest(r.Context(), &http.Request{Method: http.MethodGet, URL: &url.URL{RawQuery: q.Encode()}, Form: q, Header: http.Header{}})
	if err != nil {
		return nil, oauthstate.Client{}, "", err
	}
	c, err := s.lookupClient(r.Context(), ar.GetClient().GetID())
	return ar, c, id, err
}

type agentChoice struct {
	ID       string
	Projects string
	Checked  bool
}

type pageView struct {
	// Public and Bare are the shared layout's: no OAuth page may be
	// indexed, and each shows the brand alone (page sets Bare).
	Public, Bare               bool
	Title, Notice, NoticeClass string
	Root                       string
	Me, CSRF                   string
	ID                         string
	ClientName, RedirectHost   string
	Registration               string
	Agents                     []agentChoice
	Projects                   []string
	Grants                     []oauthstate.Connection
	// The device grant's pages: the user code, where sign-in comes back
	// to, how long codes last, the runner's name and what was decided.
	Code, Next, RunnerName, Agent string
	DeviceHash                    string
	Minutes                       int
	Allowed                       bool
}

// consentPage is GET /oauth/consent/{id}: the client, where it sends the
// owner back, how it registered, and the agent it will act as.
func (s *Server) consentPage(w http.ResponseWriter, r *http.Request) {
	ar, c, id, err := s.pending(r)
	if err != nil {
		s.pendingError(w, r, err)
		return
	}
	me, ok := s.session(r)
	if !ok {
		s.page(w, r, http.StatusOK, "signin.html", pageView{Title: "Sign in to connect " + c.Name, ID: id, ClientName: c.Name, Next: "oauth/consent/" + id})
		return
	}
	v, err := s.consentView(r.Context(), me, ar, c, id)
	if err != nil {
		s.failed(w, r, err)
		return
	}
	s.page(w, r, http.StatusOK, "consent.html", v)
}

func (s *Server) consentView(ctx context.Context, me session.Session, ar fosite.AuthorizeRequester, c oauthstate.Client, id string) (pageView, error) {
	agents, projects, err := s.ownerAgents(ctx, me.Owner)
	if err != nil {
		return pageView{}, err
	}
	how := "registered itself with Prickle (dynamic client registration)"
	if c.Registration == oauthstate.RegisteredByDocument {
		how = "identified by its client ID metadata document at " + c.ID
	}
	host := ""
	if u, err := url.Parse(ar.GetRedirectURI().String()); err == nil {
		host = u.Host
	}
	v := pageView{Title: "Connect " + c.Name, Me: me.Owner, CSRF: s.cfg.Keys.FormToken(me), ID: id,
		ClientName: c.Name, RedirectHost: host, Registration: how, Projects: projects}
	for i, a := range agents {
		v.Agents = append(v.Agents, agentChoice{ID: a.ID, Projects: strings.Join(a.Projects, ", "), Checked: i == 0})
	}
	return v, nil
}

// ownerAgents lists the owner's agents and projects, sorted.
func (s *Server) ownerAgents(ctx context.Context, owner string) ([]team.Agent, []string, error) {
	projects, err := s.cfg.Directory.OwnerProjects(ctx, owner)
	if err != nil {
		return nil, nil, fmt.Errorf("projects of %s: %w", owner, err)
	}
	seen := map[string]team.Agent{}
	for _, p := range projects {
		agents, err := s.cfg.Directory.ListAgents(ctx, p)
		if err != nil {
			return nil, nil, fmt.Errorf("agents of %s: %w", p, err)
		}
		for _, a := range agents {
			if a.Owner == owner {
				seen[a.ID] = a
			}
		}
	}
	out := make([]team.Agent, 0, len(seen))
	for _, a := range seen {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	sort.Strings(projects)
	return out, projects, nil
}

// decide is POST /oauth/consent/{id}: the owner's decision, same-origin and
// with the session's form token. Allow binds the code to the agent chosen
// (or created) here; deny sends access_denied back to the client.
func (s *Server) decide(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	me, ok := s.ownerForm(w, r, "This decision did not come from Prickle's consent page, or you are not signed in. Nothing was granted.")
	if !ok {
		return
	}
	ar, c, id, err := s.pending(r)
	if err != nil {
		s.pendingError(w, r, err)
		return
	}
	if err := s.cfg.Grants.DeactivateOAuthRecord(ctx, KindPending, identity.Hash(id)); err != nil {
		s.pendingError(w, r, err)
		return
	}
	if r.PostForm.Get("decision") != "allow" {
		s.provider.WriteAuthorizeError(ctx, w, ar, fosite.ErrAccessDenied.WithHint("The owner refused."))
		return
	}
	agent, msg, err := s.chosenAgent(ctx, me.Owner, r.PostForm)
	if err != nil {
		s.failed(w, r, err)
		return
	}
	if msg != "" {
		v, err := s.consentView(ctx, me, ar, c, id)
		if err != nil {
			s.failed(w, r, err)
			return
		}
		// The pending request was used: keep it usable for a corrected choice.
		if err := s.cfg.Grants.PutOAuthRecord(ctx, oauthstate.Record{Kind: KindPending, Hash: identity.Hash(id), Family: ar.GetID(), Active: true,
			Expires: s.cfg.Now().Add(PendingLifespan), Request: []byte(ar.GetRequestForm().Encode())}); err != nil {
			s.failed(w, r, err)
			return
		}
		v.Notice, v.NoticeClass = msg, "error"
		s.page(w, r, http.StatusBadRequest, "consent.html", v)
		return
	}
	ar.GrantScope(oauthresource.Scope)
	ar.GrantAudience(s.resource.URL())
	sess := &fosite.DefaultSession{Subject: agent, Username: me.Owner, Extra: map[string]any{"client_name": c.Name}}
	resp, err := s.provider.NewAuthorizeResponse(ctx, ar, sess)
	if err != nil {
		s.logGrantError(ctx, "authorization response failed", err)
		s.provider.WriteAuthorizeError(ctx, w, ar, err)
		return
	}
	s.cfg.Log.InfoContext(ctx, "client connected", "owner", me.Owner, "agent", agent, "client", clip(c.ID, 200))
	s.provider.WriteAuthorizeResponse(ctx, w, ar, resp)
}

// chosenAgent is the agent the form names: one of the owner's, or a new
// one (owner/<name>) in projects the owner's agents are in. msg explains a
// choice that cannot be used.
func (s *Server) chosenAgent(ctx context.Context, owner string, form url.Values) (agent, msg string, err error) {
	agents, projects, err := s.ownerAgents(ctx, owner)
	if err != nil {
		return "", "", err
	}
	choice := form.Get("agent")
	if choice != "new" {
		if slices.ContainsFunc(agents, func(a team.Agent) bool { return a.ID == choice }) {
			return choice, "", nil
		}
		return "", "Choose one of your agents, or a new one.", nil
	}
	name := strings.TrimSpace(form.Get("new_agent"))
	if !agentName.MatchString(name) {
		return "", "Name the new agent with lowercase letters, digits and single hyphens, like claude-web.", nil
	}
	id := owner + "/" + name
	if slices.ContainsFunc(agents, func(a team.Agent) bool { return a.ID == id }) {
		return "", id + " exists already: choose it above, or pick another name.", nil
	}
	picked := form["project"]
	if len(picked) == 0 {
		return "", "Choose at least one project for the new agent.", nil
	}
	for _, p := range picked {
		if !slices.Contains(projects, p) {
			return "", "Choose projects your agents are in.", nil
		}
	}
	if err := admin.New(s.cfg.Directory).CreateAgent(ctx, id, picked); err != nil {
		return "", "", err
	}
	return id, "", nil
}

func (s *Server) pendingError(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, oauthstate.ErrNotFound) || errors.Is(err, oauthstate.ErrInactive) {
		s.page(w, r, http.StatusGone, "error.html", pageView{Title: "Start again", Notice: fmt.Sprintf("This connection request was used or has expired (they last %d minutes). Start connecting again from the application.", int(PendingLifespan/time.Minute))})
		return
	}
	var rfc *fosite.RFC6749Error
	if errors.As(err, &rfc) {
		s.page(w, r, http.StatusBadRequest, "error.html", pageView{Title: "Not connected", Notice: rfc.GetDescription()})
		return
	}
	s.failed(w, r, err)
}

// session is the signed-in owner, as the web pages see it.
func (s *Server) session(r *http.Request) (session.Session, bool) {
	me, ok, err := s.cfg.Keys.From(r.Context(), s.cfg.Directory, r, s.cfg.Now())
	if err != nil {
		s.cfg.Log.ErrorContext(r.Context(), "session check failed", "error", err.Error())
	}
	return me, ok
}

// ownerForm checks a signed-in owner's POST on these pages: a bounded
// body, the same origin and the session's form token. On false it has
// written the 403 with refused, which says nothing was done.
func (s *Server) ownerForm(w http.ResponseWriter, r *http.Request, refused string) (session.Session, bool) {
	me, ok := s.session(r)
	r.Body = http.MaxBytesReader(w, r.Body, 8<<10)
	if !ok || r.ParseForm() != nil || !s.sameOrigin(r) || !s.cfg.Keys.CheckFormToken(me, r.PostForm.Get("csrf")) {
		s.page(w, r, http.StatusForbidden, "error.html", pageView{Title: "Refused", Notice: refused})
		return session.Session{}, false
	}
	return me, true
}

// sameOrigin refuses a cross-site POST: Sec-Fetch-Site, and Origin, when it names one, must be the base URL's.
func (s *Server) sameOrigin(r *http.Request) bool {
	return sameorigin.Post(r, sameorigin.Of(s.cfg.BaseURL))
}

func (s *Server) failed(w http.ResponseWriter, r *http.Request, err error) {
	s.cfg.Log.ErrorContext(r.Context(), "oauth page failed", "error", err.Error())
	s.page(w, r, http.StatusInternalServerError, "error.html", pageView{Title: "Something went wrong", Notice: "Prickle could not finish this. Try again in a minute."})
}

// page renders a page: no caching, no framing, a strict CSP.
func (s *Server) page(w http.ResponseWriter, r *http.Request, status int, name string, v pageView) {
	// Relative to the site root, so pages work under an API Gateway stage path.
	v.Root = strings.Repeat("../", strings.Count(strings.TrimPrefix(r.URL.Path, "/"), "/"))
	v.Bare = true
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self' https: http://127.0.0.1:* http://localhost:*; frame-ancestors 'none'; base-uri 'none'")
	w.WriteHeader(status)
	if err := pages.ExecuteTemplate(w, name, v); err != nil {
		s.cfg.Log.Error("render oauth page", "page", name, "error", err.Error())
	}
}
