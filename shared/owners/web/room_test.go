package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/auth/oauthstate"
	"github.com/useprickle/prickle/shared/auth/session"
	"github.com/useprickle/prickle/shared/domain/event"
	"github.com/useprickle/prickle/shared/domain/pulse"
	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/owners/notify"
	"github.com/useprickle/prickle/shared/owners/notify/outbox"
	"github.com/useprickle/prickle/shared/owners/web"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/teamtest"
)

// The room's flows (sign-in, Team Pulse, board, task page) run against the
// in-memory fake below and, with -tags integration, the real store.

// roomBackend is a store the tests seed through the service and read back.
type roomBackend interface {
	team.Store
	web.Store
	team.ModelSpendStore
	PutOAuthConnection(ctx context.Context, g oauthstate.Connection) error
	PutJoinedRunner(ctx context.Context, r oauthstate.JoinedRunner) error
}

// The room's directory: website-v2 (alice, bob) and mobile-app (carol).
var (
	roomProjects = []team.Project{
		{Slug: "website-v2", Name: "Website v2", OwnerApprovalTypes: []string{"doc"}, StepDeadline: 24 * time.Hour},
		{Slug: "mobile-app", Name: "Mobile app", StepDeadline: 24 * time.Hour},
	}
	roomOwners = []team.Owner{{Name: "alice", Email: "alice@example.com", SlackChannel: "#alice", SlackUserID: "U0ALICE"}, {Name: "bob", Email: "bob@example.com"}, {Name: "carol", Email: "carol@example.com"}}
	roomAgents = []team.Agent{
		{ID: "alice/writer", Owner: "alice", Projects: []string{"website-v2"}},
		{ID: "bob/reviewer", Owner: "bob", Projects: []string{"website-v2"}},
		{ID: "carol/tester", Owner: "carol", Projects: []string{"mobile-app"}},
	}
)

// newFakeRoom is teamtest's store seeded with the room's directory.
func newFakeRoom(t *testing.T) roomBackend {
	f := teamtest.New()
	for _, p := range roomProjects {
		f.AddProject(p)
	}
	for _, o := range roomOwners {
		f.AddOwner(o)
	}
	for _, a := range roomAgents {
		f.AddAgent(a)
	}
	return f
}

func TestRoomInMemory(t *testing.T) { runRoom(t, newFakeRoom) }

// roomEnv is a backend with the web handler in front, on a loopback httptest server.
type roomEnv struct {
	t     *testing.T
	store roomBackend
	svc   *team.Service
	spend *team.ModelSpend
	srv   *httptest.Server
	clock *clock
	box   *outbox.Outbox
}

func newRoomEnv(t *testing.T, st roomBackend) *roomEnv {
	t.Helper()
	svc := team.New(st)
	c := &clock{at: time.Now().UTC()}
	svc.Now = c.now
	box := outbox.New()
	e := &roomEnv{t: t, store: st, svc: svc, clock: c, box: box}
	var h http.Handler
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a := r.Header.Get(testClientHeader); a != "" {
			r.RemoteAddr = a // the source address API Gateway would report for this browser
		}
		h.ServeHTTP(w, r)
	}))
	// Sign-in links travel as notify does it in the cloud: web publishes
	// Sign-in Requested, the notifier mints the link and sends it.
	notifier := &notify.Notifier{Owners: st, Ledger: &memLedger{sent: map[string]bool{}}, Mail: box, Slack: box, Signer: signer, BaseURL: e.srv.URL, Now: c.now, Log: slog.New(slog.DiscardHandler)}
	svc.Events = publishTo(notifier.Handle)
	e.spend = team.NewModelSpend(st, svc.Events, slog.New(slog.DiscardHandler))
	e.spend.Now = c.now
	h = web.New(web.Config{Service: svc, Spend: e.spend, Store: st, Signer: signer, BaseURL: e.srv.URL, ImageHosts: []string{"Images.Example.org", "bad;host"}, Outbox: box, Now: c.now, Log: slog.New(slog.DiscardHandler)})
	t.Cleanup(e.srv.Close)
	return e
}

type roomResp struct {
	status int
	header http.Header
	raw    string
	text   string
}

// browser is one person's cookie jar; redirects are not followed so tests see them.
type browser struct {
	e       *roomEnv
	cookies map[string]*http.Cookie
	addr    string // the source address the server sees; empty: loopback
}

func (e *roomEnv) browser() *browser { return &browser{e: e, cookies: map[string]*http.Cookie{}} }

// from is a browser on another network: the server sees addr as its source.
func (e *roomEnv) from(addr string) *browser {
	b := e.browser()
	b.addr = addr
	return b
}

// testClientHeader carries a test browser's source address to the test server.
const testClientHeader = "X-Test-Remote-Addr"

func (b *browser) do(method, path string, form url.Values) roomResp {
	b.e.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, b.e.srv.URL+path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for _, c := range b.cookies {
		req.AddCookie(c)
	}
	if b.addr != "" {
		req.Header.Set(testClientHeader, b.addr)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		b.e.t.Fatal(err)
	}
	defer resp.Body.Close()
	for _, c := range resp.Cookies() {
		if c.MaxAge < 0 {
			delete(b.cookies, c.Name)
		} else {
			b.cookies[c.Name] = c
		}
	}
	raw, _ := io.ReadAll(resp.Body)
	return roomResp{status: resp.StatusCode, header: resp.Header, raw: string(raw), text: html.UnescapeString(string(raw))}
}

func (b *browser) get(path string) roomResp { return b.do(http.MethodGet, path, nil) }

var (
	roomCSRF = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
	roomNext = regexp.MustCompile(`name="next" value="([^"]+)"`)
)

func formToken(t *testing.T, r roomResp) string {
	t.Helper()
	m := roomCSRF.FindStringSubmatch(r.raw)
	if m == nil {
		t.Fatalf("no form token on the page (status %d):\n%s", r.status, r.text)
	}
	return html.UnescapeString(m[1])
}

// lastLink is the newest sign-in link the outbox holds for to.
func (e *roomEnv) lastLink(to string) string {
	e.t.Helper()
	msgs := e.box.List()
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].To == to && len(msgs[i].Links) > 0 && strings.Contains(msgs[i].Links[0], "/signin/") {
			return msgs[i].Links[0]
		}
	}
	e.t.Fatalf("no sign-in link for %s in the outbox: %+v", to, msgs)
	return ""
}

// signIn asks for a link as owner, opens the one emailed and presses the button.
func (e *roomEnv) signIn(owner string) *browser {
	e.t.Helper()
	o, _ := e.store.Owner(context.Background(), owner)
	return e.signInBy(owner, o.Email)
}

// signInBy asks for a link as owner, opens the one sent to "to" (an email
// address or a Slack member id) and presses the button.
func (e *roomEnv) signInBy(owner, to string) *browser {
	e.t.Helper()
	b := e.browser()
	if r := b.do(http.MethodPost, "/signin", url.Values{"owner": {owner}}); r.status != http.StatusOK {
		e.t.Fatalf("POST /signin = %d:\n%s", r.status, r.text)
	}
	path := strings.TrimPrefix(e.lastLink(to), e.srv.URL)
	page := b.get(path)
	if page.status != http.StatusOK || !strings.Contains(page.text, "Sign in as "+owner) {
		e.t.Fatalf("GET link = %d:\n%s", page.status, page.text)
	}
	r := b.do(http.MethodPost, path, url.Values{"csrf": {formToken(e.t, page)}})
	if r.status != http.StatusSeeOther || b.cookies[session.CookieName] == nil {
		e.t.Fatalf("POST link = %d, cookies %v:\n%s", r.status, b.cookies, r.text)
	}
	return b
}

func (e *roomEnv) workingTask(id, assignee, requester string) task.Task {
	e.t.Helper()
	now := e.clock.now().Truncate(time.Millisecond)
	tk := task.Task{
		ID: id, Project: "website-v2", State: task.Working, Requester: requester, Assignee: assignee,
		Packet:           task.Packet{Task: "Publish the site " + id, DeliverableType: "code", AcceptanceCriteria: []string{"pushed to main"}, Context: "", Files: []string{}, DependsOn: []string{}},
		LatestCheckpoint: &task.Checkpoint{Progress: "Ready to push.", Decisions: []string{"Squash first."}, FilesTouched: []string{}, NextSteps: []string{}, OpenQuestions: []string{}},
		CreatedAt:        now, UpdatedAt: now,
	}
	if err := e.store.CreateTask(context.Background(), tk, task.Event{At: now, By: requester, Action: "hand_off", To: task.Working}); err != nil {
		e.t.Fatal(err)
	}
	return tk
}

func (e *roomEnv) askStep(taskID, agent string) string {
	e.t.Helper()
	run := identity.Caller{Agent: agent, Owner: strings.Split(agent, "/")[0], Kind: identity.KindRun, TaskID: taskID, RunID: "run_" + taskID}
	out, err := e.svc.RequestStep(context.Background(), run, team.RequestStepInput{
		ToolName: "Bash", Input: json.RawMessage(`{"command":"git push origin main"}`), Kind: "outbound", Target: "origin", Reason: "Publish.",
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return out.StepID
}

func runRoom(t *testing.T, newStore func(t *testing.T) roomBackend) {
	t.Run("sign-in: links for one name are limited per window, for any name alike", func(t *testing.T) {
		e := newRoomEnv(t, newStore(t))
		b := e.browser()
		for _, name := range []string{"alice", "mallory"} {
			for i := 1; i <= 6; i++ {
				got := b.do(http.MethodPost, "/signin", url.Values{"owner": {name}})
				want := http.StatusOK
				if i == 6 {
					want = http.StatusTooManyRequests
				}
				if got.status != want {
					t.Fatalf("request %d for %s: status %d, want %d", i, name, got.status, want)
				}
				if i == 6 && !strings.Contains(got.text, "Too many sign-in links") {
					t.Errorf("limited page says:\n%s", got.text)
				}
			}
		}
		if n := len(e.box.List()); n != 10 {
			t.Errorf("outbox holds %d messages; want 10 (5 links to alice by email and Slack, none to mallory)", n)
		}
	})
	t.Run("sign-in: a stranger's requests stop the stranger, not the owner; the name's own bound still holds", func(t *testing.T) {
		e := newRoomEnv(t, newStore(t))
		ask := func(b *browser, name string) roomResp {
			return b.do(http.MethodPost, "/signin", url.Values{"owner": {name}})
		}
		stranger := e.from("203.0.113.7:40000")
		for i := 1; i <= session.LinksPerNamePerClient; i++ {
			if got := ask(stranger, "alice"); got.status != http.StatusOK {
				t.Fatalf("stranger's request %d for alice: %d", i, got.status)
			}
		}
		if got := ask(stranger, "alice"); got.status != http.StatusTooManyRequests || !strings.Contains(got.text, "Too many sign-in links were asked for alice from your network") {
			t.Fatalf("stranger's 6th request for alice: %d:\n%s", got.status, got.text)
		}
		before := len(e.box.List())
		if got := ask(e.from("198.51.100.2:50000"), "alice"); got.status != http.StatusOK || !strings.Contains(got.text, "a sign-in link is on its way") {
			t.Fatalf("alice's own request after the stranger's: %d:\n%s", got.status, got.text)
		}
		if len(e.box.List()) == before {
			t.Fatal("alice's own request sent no link")
		}
		// Every client together: the name is sent at most LinksPerName links per window.
		sent := session.LinksPerNamePerClient + 1
		for c := 0; sent < session.LinksPerName; c++ {
			b := e.from(fmt.Sprintf("192.0.2.%d:1", c+10))
			for i := 0; i < session.LinksPerNamePerClient && sent < session.LinksPerName; i++ {
				if got := ask(b, "alice"); got.status != http.StatusOK {
					t.Fatalf("link %d for alice from client %d: %d", sent+1, c, got.status)
				}
				sent++
			}
		}
		if got := ask(e.from("192.0.2.200:1"), "alice"); got.status != http.StatusTooManyRequests || !strings.Contains(got.text, "Too many sign-in links were asked for alice in the last minutes") {
			t.Fatalf("link %d for alice from a fresh client: %d:\n%s", session.LinksPerName+1, got.status, got.text)
		}
		// One client, many names: bounded too; addresses of one IPv6 /64 are one client.
		for i := 0; i < session.RequestsPerClient; i++ {
			addr := fmt.Sprintf("[2001:db8:7:7::%x]:1", i+1)
			if got := ask(e.from(addr), fmt.Sprintf("name-%d", i)); got.status != http.StatusOK {
				t.Fatalf("request %d from the /64: %d", i+1, got.status)
			}
		}
		if got := ask(e.from("[2001:db8:7:7:ffff::1]:1"), "bob"); got.status != http.StatusTooManyRequests || !strings.Contains(got.text, "from your network") {
			t.Fatalf("request %d from the /64: %d:\n%s", session.RequestsPerClient+1, got.status, got.text)
		}
		if got := ask(e.from("[2001:db8:7:8::1]:1"), "bob"); got.status != http.StatusOK {
			t.Fatalf("bob from the next /64: %d", got.status)
		}
	})
	t.Run("sign-in: a link by email and Slack DM, GET changes nothing, POST signs in once, the cookie is right", func(t *testing.T) {
		e := newRoomEnv(t, newStore(t))
		b := e.browser()
		form := b.get("/signin")
		if form.status != http.StatusOK || !strings.Contains(form.text, `name="owner"`) {
			t.Fatalf("GET /signin = %d:\n%s", form.status, form.text)
		}
		// Every page that says how long a link works says session.LinkLifetime.
		lifetime := fmt.Sprintf("%d minutes", int(session.LinkLifetime/time.Minute))
		mustContain(t, "the sign-in form", form.text, "It works once, for "+lifetime+".")
		sent := b.do(http.MethodPost, "/signin", url.Values{"owner": {"alice"}})
		if sent.status != http.StatusOK || !strings.Contains(sent.text, "If alice is an owner here, a sign-in link is on its way") {
			t.Fatalf("POST /signin = %d:\n%s", sent.status, sent.text)
		}
		mustContain(t, "the notice of a link sent", sent.text, "It works once, for "+lifetime+".")
		msgs := e.box.List()
		if len(msgs) != 2 || msgs[0].Channel != "email" || msgs[0].To != "alice@example.com" || msgs[1].Channel != "slack" || msgs[1].To != "U0ALICE" {
			t.Fatalf("outbox: %s; want an email and a Slack DM to alice (never her channel)", destinations(msgs))
		}
		if strings.Contains(sent.raw, "/signin/") {
			t.Error("the page shows the sign-in link itself")
		}
		// An unknown owner gets the same answer and nothing is sent.
		other := b.do(http.MethodPost, "/signin", url.Values{"owner": {"mallory"}})
		if other.status != http.StatusOK || len(e.box.List()) != 2 {
			t.Errorf("unknown owner: %d, %d messages", other.status, len(e.box.List()))
		}
		path := strings.TrimPrefix(e.lastLink("alice@example.com"), e.srv.URL)
		for range 3 {
			page := b.get(path)
			if page.status != http.StatusOK || !strings.Contains(page.text, "Sign in as alice") || len(b.cookies) != 0 {
				t.Fatalf("GET link = %d, cookies %v:\n%s", page.status, b.cookies, page.text)
			}
			mustContain(t, "the sign-in link's page", page.text, fmt.Sprintf("on this device for %d hours.", int(session.SessionLifetime/time.Hour)))
		}
		page := b.get(path)
		if r := b.do(http.MethodPost, path, url.Values{"csrf": {"forged"}}); r.status != http.StatusForbidden || len(b.cookies) != 0 {
			t.Fatalf("forged form = %d", r.status)
		}
		r := b.do(http.MethodPost, path, url.Values{"csrf": {formToken(t, page)}})
		if r.status != http.StatusSeeOther || r.header.Get("Location") != "../" {
			t.Fatalf("POST link = %d to %q:\n%s", r.status, r.header.Get("Location"), r.text)
		}
		var ck *http.Cookie
		for _, c := range (&http.Response{Header: r.header}).Cookies() {
			ck = c
		}
		if ck == nil || ck.Name != session.CookieName || !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode || ck.Secure || ck.MaxAge != 12*3600 {
			t.Fatalf("cookie = %+v; want HttpOnly, SameSite=Lax, not Secure on loopback, 12 h", ck)
		}
		home := b.get("/")
		if home.status != http.StatusOK || !strings.Contains(home.text, "Website v2") || strings.Contains(home.text, "Mobile app") {
			t.Errorf("home = %d:\n%s", home.status, home.text)
		}
		// The link is used: a second POST, from anyone, is refused.
		if again := e.browser().do(http.MethodPost, path, url.Values{"csrf": {formToken(t, page)}}); again.status != http.StatusGone || !strings.Contains(again.text, "already used") {
			t.Errorf("second use = %d:\n%s", again.status, again.text)
		}
		// An expired link is refused, on GET and POST.
		e.browser().do(http.MethodPost, "/signin", url.Values{"owner": {"bob"}})
		late := strings.TrimPrefix(e.lastLink("bob@example.com"), e.srv.URL)
		e.clock.at = e.clock.at.Add(session.LinkLifetime + time.Minute)
		lb := e.browser()
		if g := lb.get(late); g.status != http.StatusGone || !strings.Contains(g.text, "expired") {
			t.Errorf("expired GET = %d:\n%s", g.status, g.text)
		} else {
			mustContain(t, "the expired link's page", g.text, "Sign-in links work for "+lifetime+".")
		}
		if p := lb.do(http.MethodPost, late, url.Values{"csrf": {"x"}}); p.status == http.StatusSeeOther || len(lb.cookies) != 0 {
			t.Errorf("expired POST = %d, cookies %v", p.status, lb.cookies)
		}
		if tampered := lb.get(late[:len(late)-3] + "AAA"); tampered.status != http.StatusForbidden {
			t.Errorf("tampered = %d", tampered.status)
		}
		// The session ends after 12 hours.
		e.clock.at = e.clock.at.Add(12 * time.Hour)
		if r := b.get("/p/website-v2"); r.status != http.StatusSeeOther || r.header.Get("Location") != "../signin" {
			t.Errorf("after 12 h: %d to %q", r.status, r.header.Get("Location"))
		}
	})

	t.Run("pages need a session; another project's pages are 404, like missing ones", func(t *testing.T) {
		e := newRoomEnv(t, newStore(t))
		e.workingTask("tsk_web_1", "alice/writer", "bob/reviewer")
		anon := e.browser()
		for _, p := range []string{"/p/website-v2", "/p/website-v2/tasks", "/t/tsk_web_1"} {
			if r := anon.get(p); r.status != http.StatusSeeOther || !strings.HasSuffix(r.header.Get("Location"), "signin") {
				t.Errorf("anonymous %s = %d to %q", p, r.status, r.header.Get("Location"))
			}
		}
		if r := anon.get("/p/website-v2/pulse"); r.status != http.StatusUnauthorized {
			t.Errorf("anonymous fragment = %d", r.status)
		}
		carol := e.signIn("carol")
		var bodies []string
		for _, p := range []string{"/p/website-v2", "/p/website-v2/tasks", "/t/tsk_web_1", "/p/no-such-project", "/t/no-such-task"} {
			r := carol.get(p)
			if r.status != http.StatusNotFound {
				t.Errorf("carol %s = %d, want 404", p, r.status)
			}
			bodies = append(bodies, r.text)
		}
		if bodies[0] != bodies[3] || bodies[2] != bodies[4] {
			t.Error("a hidden page and a missing one answer differently")
		}
		if r := carol.get("/p/website-v2/pulse"); r.status != http.StatusNotFound {
			t.Errorf("carol fragment = %d", r.status)
		}
		if r := carol.get("/p/mobile-app"); r.status != http.StatusOK || !strings.Contains(r.text, "carol/tester") {
			t.Errorf("carol's own project = %d", r.status)
		}
		stepID := e.askStep("tsk_web_1", "alice/writer")
		page := carol.get("/p/mobile-app")
		if r := carol.do(http.MethodPost, "/t/tsk_web_1", url.Values{"csrf": {formToken(t, page)}, "step": {stepID}, "decision": {"approve"}}); r.status != http.StatusNotFound {
			t.Errorf("carol deciding on website-v2 = %d", r.status)
		}
	})

	t.Run("Team Pulse: agents grouped by owner, task linked, stale marked, fragment for live refresh", func(t *testing.T) {
		e := newRoomEnv(t, newStore(t))
		e.workingTask("tsk_pulse", "alice/writer", "bob/reviewer")
		ctx := context.Background()
		branch, decision, tid := "hero-copy", "Lead with coordination.", "tsk_pulse"
		if err := e.store.PutPulse(ctx, pulse.Entry{AgentID: "alice/writer", Owner: "alice", Project: "website-v2", Availability: "working",
			Doing: "Drafting the hero copy.", TaskID: &tid, Branch: &branch, Files: []string{"site/hero.md"}, LastDecision: &decision, UpdatedAt: e.clock.at.Add(-3 * time.Minute).Truncate(time.Millisecond)}); err != nil {
			t.Fatal(err)
		}
		if err := e.store.PutPulse(ctx, pulse.Entry{AgentID: "bob/reviewer", Owner: "bob", Project: "website-v2", Availability: "idle",
			Doing: "Waiting for results.", Files: []string{}, UpdatedAt: e.clock.at.Add(-45 * time.Minute).Truncate(time.Millisecond)}); err != nil {
			t.Fatal(err)
		}
		alice := e.signIn("alice")
		r := alice.get("/p/website-v2")
		if r.status != http.StatusOK {
			t.Fatalf("pulse = %d:\n%s", r.status, r.text)
		}
		for _, want := range []string{"Drafting the hero copy.", `href="../t/tsk_pulse"`, "hero-copy", "site/hero.md", "Lead with coordination.", "3 min ago", "45 min ago", `id="owner-alice"`, `id="owner-bob"`, `src="../static/pulse.js"`, `data-refresh="website-v2/pulse"`} {
			if !strings.Contains(r.raw, want) && !strings.Contains(r.text, want) {
				t.Errorf("pulse lacks %q", want)
			}
		}
		if strings.Index(r.raw, `id="owner-alice"`) > strings.Index(r.raw, `id="owner-bob"`) {
			t.Error("the signed-in owner's agents are not first")
		}
		if !regexp.MustCompile(`data-agent="bob/reviewer">[\s\S]*?stale`).MatchString(r.raw) || regexp.MustCompile(`data-agent="alice/writer">[^<]*<p[^>]*><strong>alice/writer</strong>\s*<span[^>]*>working</span> <span class="tag stale-tag">`).MatchString(r.raw) {
			t.Error("staleness marked wrong: bob (45 min) should be stale, alice (3 min) not")
		}
		if strings.Contains(r.raw, "<script>") || !strings.Contains(r.header.Get("Content-Security-Policy"), "default-src 'self'") {
			t.Error("inline script or CSP missing")
		}
		frag := alice.get("/p/website-v2/pulse")
		if frag.status != http.StatusOK || strings.Contains(frag.raw, "<html") || !strings.Contains(frag.raw, `href="../t/tsk_pulse"`) {
			t.Errorf("fragment = %d:\n%s", frag.status, frag.raw)
		}
		// A new report shows on the next fetch of the fragment.
		if err := e.store.PutPulse(ctx, pulse.Entry{AgentID: "bob/reviewer", Owner: "bob", Project: "website-v2", Availability: "working",
			Doing: "Reviewing PR #42.", Files: []string{}, UpdatedAt: e.clock.at.Truncate(time.Millisecond)}); err != nil {
			t.Fatal(err)
		}
		if frag := alice.get("/p/website-v2/pulse"); !strings.Contains(frag.text, "Reviewing PR #42.") || !strings.Contains(frag.text, "just now") {
			t.Errorf("fragment after update lacks the new report:\n%s", frag.text)
		}
	})

	t.Run("files held: Team Pulse says which files each agent holds, the task page who holds files for it", func(t *testing.T) {
		e := newRoomEnv(t, newStore(t))
		e.workingTask("tsk_held", "alice/writer", "bob/reviewer")
		e.workingTask("tsk_other", "bob/reviewer", "alice/writer")
		ctx := context.Background()
		put := func(agent, taskID string, ago time.Duration, files ...string) {
			t.Helper()
			if err := e.store.PutPulse(ctx, pulse.Entry{AgentID: agent, Owner: strings.Split(agent, "/")[0], Project: "website-v2", Availability: "working",
				Doing: "Editing", TaskID: &taskID, Files: files, UpdatedAt: e.clock.at.Add(-ago).Truncate(time.Millisecond)}); err != nil {
				t.Fatal(err)
			}
		}
		put("alice/writer", "tsk_held", 2*time.Minute, "src/app.ts", "app/[id]/<page>.tsx")
		put("bob/reviewer", "tsk_other", time.Minute, "docs/review.md")
		alice := e.signIn("alice")
		if r := alice.get("/p/website-v2"); !regexp.MustCompile(`data-agent="alice/writer">[\s\S]*?<dt>Files held</dt><dd class="files"><code>src/app.ts</code>, <code>app/\[id\]/&lt;page&gt;.tsx</code></dd>`).MatchString(r.raw) {
			t.Errorf("Team Pulse does not say alice/writer holds her files:\n%s", r.raw)
		}
		page := alice.get("/t/tsk_held")
		if page.status != http.StatusOK {
			t.Fatalf("task page = %d", page.status)
		}
		if !regexp.MustCompile(`<ul id="held"><li data-agent="alice/writer"><strong>alice/writer</strong>: <code>src/app.ts</code>, <code>app/\[id\]/&lt;page&gt;.tsx</code> <span class="muted small">reported <time[^>]*>2 min ago</time>`).MatchString(page.raw) {
			t.Errorf("the task page does not show alice/writer's files:\n%s", page.raw)
		}
		if strings.Contains(page.raw, "docs/review.md") {
			t.Error("the task page shows another task's files")
		}
		if other := alice.get("/t/tsk_other"); !strings.Contains(other.raw, `<li data-agent="bob/reviewer">`) || strings.Contains(other.raw, "src/app.ts") {
			t.Errorf("tsk_other's holders:\n%s", other.raw)
		}
		// A stale pulse's files are released: Team Pulse says so, the task page leaves them out.
		put("bob/reviewer", "tsk_held", 45*time.Minute, "src/stale.ts")
		if r := alice.get("/p/website-v2"); !regexp.MustCompile(`data-agent="bob/reviewer">[\s\S]*?<dt>Files \(released\)</dt><dd class="files"><code>src/stale.ts</code>`).MatchString(r.raw) {
			t.Errorf("Team Pulse does not say bob/reviewer's stale files are released:\n%s", r.raw)
		}
		if page := alice.get("/t/tsk_held"); strings.Contains(page.raw, "src/stale.ts") || !strings.Contains(page.raw, "src/app.ts") {
			t.Errorf("the task page after bob's pulse went stale:\n%s", page.raw)
		}
		if none := alice.get("/t/tsk_other"); strings.Contains(none.raw, `id="held"`) {
			t.Error("a task nobody holds files for shows the section")
		}
	})

	t.Run("board: columns by state, cards, filters by agent and type", func(t *testing.T) {
		e := newRoomEnv(t, newStore(t))
		e.workingTask("tsk_b_working", "alice/writer", "bob/reviewer")
		ctx := context.Background()
		now := e.clock.at.Truncate(time.Millisecond)
		for i, st := range []task.State{task.Routed, task.Verifying, task.Completed} {
			tk := task.Task{ID: "tsk_b_" + string(st), Project: "website-v2", State: st, Requester: "alice/writer", Assignee: "bob/reviewer",
				Packet:    task.Packet{Task: "Task in " + string(st), DeliverableType: "doc", AcceptanceCriteria: []string{"ok"}, Files: []string{}, DependsOn: []string{}},
				CreatedAt: now.Add(time.Duration(-i-1) * time.Hour), UpdatedAt: now}
			if err := e.store.CreateTask(ctx, tk, task.Event{At: tk.CreatedAt, By: "alice/writer", Action: "hand_off", To: st}); err != nil {
				t.Fatal(err)
			}
		}
		stepTask := e.workingTask("tsk_b_waiting", "alice/writer", "bob/reviewer")
		e.askStep(stepTask.ID, "alice/writer")
		bob := e.signIn("bob")
		r := bob.get("/p/website-v2/tasks")
		if r.status != http.StatusOK {
			t.Fatalf("board = %d:\n%s", r.status, r.text)
		}
		col := func(body, id string) string {
			i := strings.Index(body, `id="col-`+id+`"`)
			if i < 0 {
				t.Fatalf("no column %s", id)
			}
			rest := body[i:]
			if j := strings.Index(rest[1:], `<section class="column"`); j >= 0 {
				rest = rest[:j+1]
			}
			return rest
		}
		for id, want := range map[string][]string{
			"routed": {"tsk_b_routed"}, "working": {"tsk_b_working", "tsk_b_waiting", "waiting on owner_approval"},
			"verifying": {"tsk_b_verifying"}, "done": {"tsk_b_completed"}, "requested": {"None."},
		} {
			c := col(r.raw, id)
			for _, w := range want {
				if !strings.Contains(c, w) {
					t.Errorf("column %s lacks %q", id, w)
				}
			}
		}
		mustContain(t, "board", r.text, "Assignee", "bob/reviewer", "Requester", "alice/writer", "1 h ago")
		docs := bob.get("/p/website-v2/tasks?type=doc")
		if strings.Contains(docs.raw, "tsk_b_working") || !strings.Contains(docs.raw, "tsk_b_routed") || !strings.Contains(docs.raw, `<option value="doc" selected>`) {
			t.Error("type filter wrong")
		}
		none := bob.get("/p/website-v2/tasks?agent=carol/tester&type=nonsense")
		if none.status != http.StatusOK || !strings.Contains(none.text, "5 tasks") {
			t.Errorf("unknown filter values are ignored: %d %s", none.status, regexp.MustCompile(`\d+ tasks?`).FindString(none.text))
		}
	})

	t.Run("task page: packet, checkpoint, evidence, history; the owner approves a pending step there", func(t *testing.T) {
		e := newRoomEnv(t, newStore(t))
		tk := e.workingTask("tsk_page", "alice/writer", "bob/reviewer")
		ctx := context.Background()
		// A returned result with evidence (the task is verifying) on another task.
		now := e.clock.at.Truncate(time.Millisecond)
		res := task.Task{ID: "tsk_result", Project: "website-v2", State: task.Approval, Requester: "bob/reviewer", Assignee: "alice/writer",
			Packet: task.Packet{Task: "Write the docs", DeliverableType: "doc", AcceptanceCriteria: []string{"covers setup"}, Files: []string{}, DependsOn: []string{"tsk_page"}},
			Result: &task.Result{Summary: "Docs written.", Provenance: task.ProvenanceAgentGenerated, ReturnedBy: "alice/writer", ReturnedAt: now, Evidence: []task.Evidence{
				{Kind: "link", Summary: "The docs", URL: "https://example.com/docs"},
				{Kind: "screenshot", Summary: "Home page", URL: "https://example.com/shot.png"},
				{Kind: "screenshot", Summary: "Pricing page", URL: "https://images.example.org/pricing.png"},
				{Kind: "screenshot", Summary: "Other port", URL: "https://images.example.org:8443/port.png"},
				{Kind: "test_output", Summary: "go test ./...", Content: "ok  \tdocs\t0.1s"},
				{Kind: "link", Summary: "bad link", URL: "javascript:alert(1)"},
			}},
			CreatedAt: now, UpdatedAt: now}
		if err := e.store.CreateTask(ctx, res, task.Event{At: now, By: "bob/reviewer", Action: "review_accept", To: task.Approval}); err != nil {
			t.Fatal(err)
		}
		stepID := e.askStep(tk.ID, "alice/writer")

		bob := e.signIn("bob")
		seen := bob.get("/t/tsk_page")
		if seen.status != http.StatusOK {
			t.Fatalf("bob's task page = %d", seen.status)
		}
		mustContain(t, "task page", seen.text, "Publish the site tsk_page", "pushed to main", "Ready to push.", "Squash first.", "git push origin main", "Waiting for alice")
		if strings.Contains(seen.raw, `value="approve"`) {
			t.Error("bob sees Approve for alice's agent's step")
		}
		if r := bob.do(http.MethodPost, "/t/tsk_page", url.Values{"csrf": {formToken(t, seen)}, "step": {stepID}, "decision": {"approve"}}); r.status != http.StatusConflict {
			t.Errorf("bob deciding alice's step = %d", r.status)
		}

		alice := e.signIn("alice")
		page := alice.get("/t/tsk_page")
		mustContain(t, "alice's task page", page.raw, `value="approve"`, `name="step" value="`+stepID+`"`)
		if r := alice.do(http.MethodPost, "/t/tsk_page", url.Values{"csrf": {"forged"}, "step": {stepID}, "decision": {"approve"}}); r.status != http.StatusForbidden {
			t.Errorf("forged decision = %d", r.status)
		}
		r := alice.do(http.MethodPost, "/t/tsk_page", url.Values{"csrf": {formToken(t, page)}, "step": {stepID}, "decision": {"approve"}, "message": {"go"}})
		if r.status != http.StatusSeeOther || r.header.Get("Location") != "tsk_page?decided=approved" {
			t.Fatalf("approve = %d to %q:\n%s", r.status, r.header.Get("Location"), r.text)
		}
		st, err := e.store.Step(ctx, tk.ID, stepID)
		if err != nil || st.Status != step.Approved || st.DecidedBy != "alice" {
			t.Fatalf("step after approve: %+v %v", st, err)
		}
		after := alice.get("/t/tsk_page?decided=approved")
		mustContain(t, "after approve", after.text, "Approved: your decision is recorded", "step decided")
		if strings.Contains(after.raw, `name="step"`) {
			t.Error("the decided step still shows its buttons")
		}

		// The result waiting for alice: evidence shown, decided from the page.
		rp := alice.get("/t/tsk_result")
		mustContain(t, "result page", rp.raw, `<a href="https://example.com/docs"`, "<details><summary>go test ./...</summary>", `id="decide-result"`, `href="tsk_page"`)
		if strings.Contains(rp.raw, `href="javascript:`) {
			t.Error("a javascript: URL became a link")
		}
		// Screenshots on a host the project does not allow are links the
		// owner clicks, never <img>, and the page says why; allowed hosts' show inline.
		mustContain(t, "result page", rp.raw,
			`<a href="https://example.com/shot.png" rel="noopener noreferrer" referrerpolicy="no-referrer" target="_blank" class="show-image">Show image from example.com</a>`,
			`Show image from images.example.org:8443</a>`,
			`<img src="https://images.example.org/pricing.png"`)
		mustContain(t, "result page", rp.text, "Images from other hosts load only when you click, so agents cannot see when you look.")
		for _, img := range regexp.MustCompile(`<img [^>]*src="([^"]*)"`).FindAllStringSubmatch(rp.raw, -1) {
			if img[1] != "https://images.example.org/pricing.png" && !strings.HasPrefix(img[1], "/") {
				t.Errorf("the task page loads an image from a host not allowed: %s", img[0])
			}
		}
		csp := rp.header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "img-src 'self' https://images.example.org;") || strings.Contains(csp, "https:;") || strings.Contains(csp, "https: ") || strings.Contains(csp, "bad") {
			t.Errorf("task page CSP %q: want img-src 'self' and the allowed host only", csp)
		}
		plain := alice.get("/t/tsk_page")
		if strings.Contains(plain.text, "load only when you click") {
			t.Error("a task page without screenshots explains click-to-show images")
		}
		if r := alice.do(http.MethodPost, "/t/tsk_result", url.Values{"csrf": {formToken(t, rp)}, "round": {"2001-01-01T00:00:00Z"}, "decision": {"approve"}}); r.status != http.StatusConflict {
			t.Errorf("decision for another round = %d", r.status)
		}
		rp = alice.get("/t/tsk_result")
		round := regexp.MustCompile(`name="round" value="([^"]+)"`).FindStringSubmatch(rp.raw)
		if round == nil {
			t.Fatal("no round on the result form")
		}
		if r := alice.do(http.MethodPost, "/t/tsk_result", url.Values{"csrf": {formToken(t, rp)}, "round": {html.UnescapeString(round[1])}, "decision": {"approve"}}); r.status != http.StatusSeeOther {
			t.Fatalf("approve result = %d:\n%s", r.status, r.text)
		}
		if got, _ := e.store.Task(ctx, "tsk_result"); got.State != task.Completed || got.Result.Provenance != task.ProvenanceOwnerApproved {
			t.Errorf("result after approval: %s %s", got.State, got.Result.Provenance)
		}
		// No page carries a token or an approval link.
		for _, p := range []string{"/", "/p/website-v2", "/p/website-v2/tasks", "/t/tsk_page", "/t/tsk_result", "/p/website-v2/pulse"} {
			body := alice.get(p).raw
			if strings.Contains(body, "prk_") || strings.Contains(body, "/a/") || strings.Contains(body, "/signin/") {
				t.Errorf("%s leaks a token or link", p)
			}
		}
	})

	t.Run("sign out ends the session; it needs the form token", func(t *testing.T) {
		e := newRoomEnv(t, newStore(t))
		alice := e.signIn("alice")
		home := alice.get("/")
		if r := alice.do(http.MethodPost, "/signout", url.Values{"csrf": {"nope"}}); r.status != http.StatusForbidden {
			t.Errorf("forged sign-out = %d", r.status)
		}
		if r := alice.do(http.MethodPost, "/signout", url.Values{"csrf": {formToken(t, home)}}); r.status != http.StatusSeeOther {
			t.Errorf("sign-out = %d", r.status)
		}
		if r := alice.get("/p/website-v2"); r.status != http.StatusSeeOther {
			t.Errorf("after sign-out = %d", r.status)
		}
	})

	t.Run("sign out ends the session on the server: a copy of the old cookie opens nothing", func(t *testing.T) {
		e := newRoomEnv(t, newStore(t))
		alice := e.signIn("alice")
		copied := e.browser()
		copied.cookies[session.CookieName] = alice.cookies[session.CookieName]
		if r := copied.get("/p/website-v2"); r.status != http.StatusOK {
			t.Fatalf("the copied cookie before sign-out = %d", r.status)
		}
		other := e.signIn("alice") // another browser of the same owner
		if r := alice.do(http.MethodPost, "/signout", url.Values{"csrf": {formToken(t, alice.get("/"))}}); r.status != http.StatusSeeOther {
			t.Fatalf("sign-out = %d:\n%s", r.status, r.text)
		}
		assertSignedOut(t, copied, "the copied cookie after sign-out")
		if r := other.get("/p/website-v2"); r.status != http.StatusOK {
			t.Errorf("signing out one browser ended another's session: %d", r.status)
		}
	})

	t.Run("sign out everywhere ends every session of the owner and disconnects the clients they connected, nobody else's; it needs the form token", func(t *testing.T) {
		e := newRoomEnv(t, newStore(t))
		laptop, phone, bob := e.signIn("alice"), e.signIn("alice"), e.signIn("bob")
		home := laptop.get("/")
		if !strings.Contains(home.text, "Sign out everywhere") {
			t.Fatalf("no Sign out everywhere button on the home page:\n%s", home.text)
		}
		if r := laptop.do(http.MethodPost, "/signout-everywhere", url.Values{"csrf": {"nope"}}); r.status != http.StatusForbidden {
			t.Errorf("forged sign-out everywhere = %d", r.status)
		}
		if r := phone.get("/p/website-v2"); r.status != http.StatusOK {
			t.Fatalf("a forged form ended the phone's session: %d", r.status)
		}
		kept := e.browser()
		kept.cookies[session.CookieName] = laptop.cookies[session.CookieName]
		r := laptop.do(http.MethodPost, "/signout-everywhere", url.Values{"csrf": {formToken(t, home)}})
		if r.status != http.StatusOK || !strings.Contains(r.text, "Signed out everywhere") || !strings.Contains(r.text, "No application was connected") || laptop.cookies[session.CookieName] != nil {
			t.Fatalf("sign-out everywhere = %d, cookies %v:\n%s", r.status, laptop.cookies, r.text)
		}
		assertSignedOut(t, phone, "the other browser")
		assertSignedOut(t, kept, "a copy of the signing-out browser's cookie")
		if r := bob.get("/p/website-v2"); r.status != http.StatusOK {
			t.Errorf("alice signing out everywhere ended bob's session: %d", r.status)
		}
		// What alice's sessions connected is disconnected, and the page names it; bob's stays.
		ctx := context.Background()
		for _, g := range []oauthstate.Connection{
			{ID: "grant_alice_1", Owner: "alice", Agent: "alice/writer", Client: "prk_cl_1", ClientName: "Claude <web>", CreatedAt: e.clock.now()},
			{ID: "grant_alice_old", Owner: "alice", Agent: "alice/writer", Client: "prk_cl_2", ClientName: "Old connector", CreatedAt: e.clock.now(), Revoked: true},
			{ID: "grant_bob", Owner: "bob", Agent: "bob/reviewer", Client: "prk_cl_3", ClientName: "Bob's connector", CreatedAt: e.clock.now()},
		} {
			if err := e.store.PutOAuthConnection(ctx, g); err != nil {
				t.Fatal(err)
			}
		}
		again := e.signIn("alice")
		r = again.do(http.MethodPost, "/signout-everywhere", url.Values{"csrf": {formToken(t, again.get("/"))}})
		if r.status != http.StatusOK || !strings.Contains(r.raw, "<strong>Claude &lt;web&gt;</strong> acts as <strong>alice/writer</strong>") ||
			strings.Contains(r.text, "Old connector") || strings.Contains(r.text, "Bob's connector") || !strings.Contains(r.text, "Not ended: agent tokens") {
			t.Errorf("sign out everywhere with a connected client = %d:\n%s", r.status, r.text)
		}
		for owner, want := range map[string]bool{"alice": true, "bob": false} {
			grants, err := e.store.OwnerOAuthConnections(ctx, owner)
			if err != nil || len(grants) == 0 {
				t.Fatalf("grants of %s: %v, %v", owner, grants, err)
			}
			for _, g := range grants {
				if g.Revoked != want {
					t.Errorf("after alice signed out everywhere, %s's grant %s: revoked %t", owner, g.ID, g.Revoked)
				}
			}
		}
		// Signing in again works.
		if r := e.signIn("alice").get("/p/website-v2"); r.status != http.StatusOK {
			t.Errorf("signing in after signing out everywhere: %d", r.status)
		}
	})
}

// assertSignedOut checks that b's cookie opens no page, fragment or form.
func assertSignedOut(t *testing.T, b *browser, who string) {
	t.Helper()
	for _, p := range []string{"/p/website-v2", "/p/website-v2/tasks", "/p/website-v2/owners"} {
		if r := b.get(p); r.status != http.StatusSeeOther || !strings.HasSuffix(r.header.Get("Location"), "../signin") {
			t.Errorf("%s: GET %s = %d to %q, want the sign-in page", who, p, r.status, r.header.Get("Location"))
		}
	}
	if r := b.get("/p/website-v2/pulse"); r.status != http.StatusUnauthorized {
		t.Errorf("%s: the pulse fragment = %d, want 401", who, r.status)
	}
	if r := b.get("/"); strings.Contains(r.text, "Signed in as") || !strings.Contains(r.text, `name="owner"`) {
		t.Errorf("%s: home is not the sign-in form:\n%s", who, r.text)
	}
}

// publishTo delivers events straight to one handler, as the local bus does.
type publishTo event.Handler

func (p publishTo) Publish(ctx context.Context, events ...event.Event) error {
	for _, e := range events {
		if err := p(ctx, e); err != nil {
			return err
		}
	}
	return nil
}

// memLedger is notify's send ledger in memory: each (event, channel) sends once.
type memLedger struct {
	mu   sync.Mutex
	sent map[string]bool
}

func (l *memLedger) ClaimSend(_ context.Context, eventID, channel string, _ time.Time) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.sent[eventID+channel] {
		return false, nil
	}
	l.sent[eventID+channel] = true
	return true, nil
}

func (l *memLedger) ReleaseSend(_ context.Context, eventID, channel string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.sent, eventID+channel)
	return nil
}

func (l *memLedger) PutSlackRef(context.Context, string, string, string, string) error { return nil }

func (l *memLedger) SlackRef(context.Context, string, string) (string, string, error) {
	return "", "", team.ErrNotFound
}
