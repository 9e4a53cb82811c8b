// Package web is the web function's HTTP handler: the approval pages owners
// open from an email or a Slack message, owner sign-in, Team Pulse, the task
// board and task pages, the public tool reference, and, locally, the dev outbox.
//
//	GET  /a/{token}        show the exact call (or the result) and Approve / Refuse; changes nothing
//	POST /a/{token}        decide (form: decision=approve|refuse, message, csrf), then 303 to the GET
//	GET  /c/{token}        an agent's model-spend cap reached: Raise for today / Leave it; changes nothing
//	POST /c/{token}        decide (form: decision=raise|leave, csrf), once, then 303 to the GET
//	GET  /signin           ask for a sign-in link (form: owner); POST asks notify to send it by email / Slack DM
//	GET  /signin/{token}   "Sign in as …" button; changes nothing
//	POST /signin/{token}   use the link once, set the session cookie, 303 to /
//	POST /signout          end this session on the server (the cookie, and any copy, opens nothing)
//	POST /signout-everywhere end every session of the signed-in owner and disconnect the clients they connected
//	GET  /                 the signed-in owner's projects (or the sign-in form)
//	GET  /p/{project}      Team Pulse; /p/{project}/pulse is its live fragment (polled by /static/pulse.js)
//	GET  /p/{project}/tasks the board (filters: agent, type)
//	POST /p/{project}/tasks the owner creates a task (hand_off_task's packet; the requester one of the owner's agents), 303 to it
//	GET  /p/{project}/owners grants (revocable), budgets (the owner sets their own), today's spend, model spend and caps, audit downloads
//	POST /p/{project}/budgets, /p/{project}/caps, /p/{project}/grants/{grant}/revoke   the owners page's forms
//	GET  /p/{project}/audit.csv, /p/{project}/audit.json            the project's audit trail
//	GET  /t/{task}         the task page; POST decides its pending step or result as the signed-in owner,
//	                       or reviews a returned result (form: review=accept|rework|reject) for the owner's requester agent
//	GET  /docs/reference/mcp-tools[?tool=name] the tool reference, generated from the catalog; public
//	GET  /static/…         the one stylesheet and pulse.js
//	GET  /dev/outbox       the messages that would have been sent (only with Config.Outbox)
//	GET  /dev/outbox.json  the same as a JSON array, newest last
//
// Pages are server-rendered html/template, need no JavaScript (Team Pulse's
// live refresh aside), and are readable on a phone. Link tokens are never
// logged. A project or task the signed-in owner's agents are not part of is
// a 404, exactly like one that does not exist.
package web

import (
	"context"
	"embed"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/useprickle/prickle/shared/auth/link"
	"github.com/useprickle/prickle/shared/auth/oauthstate"
	"github.com/useprickle/prickle/shared/auth/session"
	"github.com/useprickle/prickle/shared/domain/budget"
	"github.com/useprickle/prickle/shared/domain/grant"
	"github.com/useprickle/prickle/shared/domain/modelspend"
	"github.com/useprickle/prickle/shared/domain/pulse"
	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/kit/httprec"
	"github.com/useprickle/prickle/shared/owners/layout"
	"github.com/useprickle/prickle/shared/owners/notify/outbox"
	"github.com/useprickle/prickle/shared/team"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// pageFuncs give the pages the numbers that are rules, from their constants:
// how long a sign-in link works, the session it opens lasts, and an approved
// call may be used.
var pageFuncs = template.FuncMap{
	"linkMinutes":  func() int { return int(session.LinkLifetime / time.Minute) },
	"sessionHours": func() int { return int(session.SessionLifetime / time.Hour) },
	"useMinutes":   func() int { return int(step.UseWindow / time.Minute) },
}

var pages = template.Must(layout.Parse(template.New("").Funcs(pageFuncs)).ParseFS(templateFS, "templates/*.html"))

// Store is what the pages read and record: the approval pages' step, task
// and history, and what the signed-in pages (owner sign-in, Team Pulse, the
// board, task and owners pages) read beyond them. It is one required
// dependency, so a store that lacks a method fails to compile where it is
// wired instead of leaving pages unmounted; *store.Store satisfies it.
type Store interface {
	Step(ctx context.Context, taskID, stepID string) (step.Step, error)
	Task(ctx context.Context, id string) (task.Task, error)
	History(ctx context.Context, id string) ([]task.Event, error)
	Project(ctx context.Context, slug string) (team.Project, error)
	ListAgents(ctx context.Context, project string) ([]team.Agent, error)
	Pulse(ctx context.Context, project string) ([]pulse.Entry, error)
	ListTasks(ctx context.Context, q team.TaskQuery) (team.TaskPage, error)
	StepsForTask(ctx context.Context, taskID string) ([]step.Step, error)
	Owner(ctx context.Context, name string) (team.Owner, error)
	// OwnerProjects lists the projects the owner's agents belong to.
	OwnerProjects(ctx context.Context, owner string) ([]string, error)
	// AllowSignInRequest counts a sign-in link asked for a name from a
	// client (session.Client) and says which bound it hit, if any.
	AllowSignInRequest(ctx context.Context, owner, client string, now time.Time) (session.SignInLimit, error)
	ProjectGrants(ctx context.Context, project string) ([]grant.Grant, error)
	ProjectBudgets(ctx context.Context, project string) ([]budget.Budget, error)
	ProjectSpend(ctx context.Context, project, day string) ([]budget.Spend, error)
	// TaskRuns and AgentsSpend are the model spend the pages show: each
	// run of a task, and each agent's cap, day and month.
	TaskRuns(ctx context.Context, taskID string) ([]modelspend.Run, error)
	AgentsSpend(ctx context.Context, agents []string, day, month string) ([]modelspend.AgentSpend, error)
	// OwnerOAuthConnections and RevokeOAuthConnection disconnect the clients the
	// owner's sessions connected when the owner signs out everywhere.
	OwnerOAuthConnections(ctx context.Context, owner string) ([]oauthstate.Connection, error)
	RevokeOAuthConnection(ctx context.Context, id string) error
	// The owners page lists the runners joined to the owner's agents and revokes them.
	oauthstate.Runners
	session.Markers
	session.Sessions
}

// Config is what the handler needs. Store is required (New panics without
// it); Outbox nil (the cloud) leaves /dev/* unmounted.
type Config struct {
	Service *team.Service
	// Spend sets owners' model-spend caps and decides the cap pages' links.
	Spend  *team.ModelSpend
	Store  Store
	Signer link.Signer
	// BaseURL is the public origin of the pages (PUBLIC_BASE_URL); a POST
	// whose Origin header names another origin is refused (without BaseURL,
	// another origin than the request's own).
	BaseURL string
	// ImageHosts are the host names (exact, lower case) whose https
	// screenshots owner pages show inline; any other image is a link the
	// owner clicks, so no agent learns when the owner looks.
	ImageHosts []string
	Outbox     *outbox.Outbox
	// Now is the clock links and steps are checked against; tests inject one.
	Now func() time.Time
	Log *slog.Logger
}

// Handler serves the web function's routes.
type Handler struct {
	cfg Config
	mux *http.ServeMux
	// keys sign sign-in links and sessions, derived from Signer's key; nil
	// when the key is too short, and then nobody can sign in.
	keys *session.Keys
}

// hostName is what an allowed image host may be: a plain DNS name, nothing
// that could end or extend the Content-Security-Policy it is written into.
var hostName = regexp.MustCompile(`^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$`)

// imageHosts lower-cases the allowed image hosts and drops any that is not a host name.
func imageHosts(hosts []string) []string {
	var out []string
	for _, h := range hosts {
		if h = strings.ToLower(strings.TrimSpace(h)); hostName.MatchString(h) {
			out = append(out, h)
		}
	}
	return out
}

// New builds the handler; mount it at the root. A Config without a Store
// is a wiring mistake, and New panics on it.
func New(cfg Config) *Handler {
	if cfg.Store == nil {
		panic("web: Config.Store is required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	cfg.ImageHosts = imageHosts(cfg.ImageHosts)
	h := &Handler{cfg: cfg, mux: http.NewServeMux()}
	if k, err := session.NewKeys(cfg.Signer.Key); err == nil {
		h.keys = &k
	}
	h.mux.HandleFunc("GET /a/{token}", h.showApproval)
	h.mux.HandleFunc("POST /a/{token}", h.decide)
	h.mux.HandleFunc("GET /docs/reference/mcp-tools", h.reference)
	h.mux.HandleFunc("GET /{$}", h.home)
	h.mux.HandleFunc("GET /signin", h.signInForm)
	h.mux.HandleFunc("POST /signin", h.sendSignIn)
	h.mux.HandleFunc("GET /signin/{token}", h.showSignIn)
	h.mux.HandleFunc("POST /signin/{token}", h.signIn)
	h.mux.HandleFunc("POST /signout", h.signOut)
	h.mux.HandleFunc("POST /signout-everywhere", h.signOutEverywhere)
	h.mux.HandleFunc("GET /p/{project}", h.teamPulse)
	h.mux.HandleFunc("GET /p/{project}/pulse", h.pulseFragment)
	h.mux.HandleFunc("GET /p/{project}/tasks", h.board)
	h.mux.HandleFunc("POST /p/{project}/tasks", h.createTask)
	h.mux.HandleFunc("GET /p/{project}/owners", h.ownersPage)
	h.mux.HandleFunc("POST /p/{project}/budgets", h.setBudget)
	h.mux.HandleFunc("POST /p/{project}/caps", h.setCap)
	h.mux.HandleFunc("GET /c/{token}", h.showCap)
	h.mux.HandleFunc("POST /c/{token}", h.decideCap)
	h.mux.HandleFunc("POST /p/{project}/grants/{grant}/revoke", h.revokeGrant)
	h.mux.HandleFunc("POST /p/{project}/runners/{runner}/revoke", h.revokeRunner)
	h.mux.HandleFunc("GET /p/{project}/audit.csv", h.auditExport)
	h.mux.HandleFunc("GET /p/{project}/audit.json", h.auditExport)
	h.mux.HandleFunc("GET /t/{task}", h.taskPage)
	h.mux.HandleFunc("POST /t/{task}", h.decideOnTask)
	static, _ := fs.Sub(staticFS, "static")
	files := http.StripPrefix("/static/", http.FileServerFS(static))
	h.mux.Handle("GET /static/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		files.ServeHTTP(w, r)
	}))
	if cfg.Outbox != nil {
		h.mux.HandleFunc("GET /dev/outbox", h.outboxPage)
		h.mux.HandleFunc("GET /dev/outbox.json", h.outboxJSON)
	}
	return h
}

// ServeHTTP sets the security headers every page carries, serves the route
// and logs one JSON line (the route pattern, never the token in the path).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	hd := w.Header()
	hd.Set("Content-Security-Policy", "default-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Content-Type-Options", "nosniff")
	rec := httprec.New(w)
	info := &requestInfo{}
	h.mux.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), infoKey{}, info)))
	_, pattern := h.mux.Handler(r)
	attrs := []any{"method", r.Method, "route", pattern, "status", rec.Status, "duration_ms", time.Since(start).Milliseconds()}
	if info.kind != "" {
		attrs = append(attrs, "link_kind", info.kind, "task", info.task)
	}
	if info.step != "" {
		attrs = append(attrs, "step", info.step)
	}
	if info.outcome != "" {
		attrs = append(attrs, "outcome", info.outcome)
	}
	if info.owner != "" {
		attrs = append(attrs, "owner", info.owner)
	}
	h.cfg.Log.InfoContext(r.Context(), "web request", attrs...)
}

type infoKey struct{}

// requestInfo is what a handler tells the request log line.
type requestInfo struct{ kind, task, step, outcome, owner string }

func infoOf(r *http.Request) *requestInfo {
	if i, ok := r.Context().Value(infoKey{}).(*requestInfo); ok {
		return i
	}
	return &requestInfo{}
}

// render writes a page with its status; only public pages (the tool reference) are cached.
func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, name string, data any) {
	public := false
	switch d := data.(type) {
	case page:
		d.Bare = true
		if d.Root == "" {
			d.Root = rootOf(r.URL.Path)
		}
		data = d
	case based:
		c := d.base()
		if c.Root == "" {
			c.Root = rootOf(r.URL.Path)
		}
		public = c.Public && c.Me == ""
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if public {
		w.Header().Set("Cache-Control", "public, max-age=300")
	} else {
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("X-Robots-Tag", "noindex, nofollow")
	}
	w.WriteHeader(status)
	if err := pages.ExecuteTemplate(w, name, data); err != nil {
		h.cfg.Log.ErrorContext(r.Context(), "render page", "template", name, "error", err.Error())
	}
}

// messageView is every page that only says something: the bare answers of
// the approval pages and sign-out (message.html) and the signed-in pages'
// refusals and not-found (room-message.html).
type messageView struct {
	chrome
	Heading, Notice, NoticeClass string
}

// message renders the bare message page: the brand alone, as the approval
// pages are, since it answers a link opened from a message.
func (h *Handler) message(w http.ResponseWriter, r *http.Request, status int, v messageView) {
	v.Bare = true
	h.render(w, r, status, "message.html", &v)
}

func (h *Handler) now() time.Time { return h.cfg.Now().UTC() }

var errNoService = errors.New("web: no team service configured")

// lacksService is errNoService when the handler has no team service, else nil.
func (h *Handler) lacksService() error {
	if h.cfg.Service == nil {
		return errNoService
	}
	return nil
}
