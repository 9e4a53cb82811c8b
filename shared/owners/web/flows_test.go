package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/auth/link"
	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/owners/notify/outbox"
	"github.com/useprickle/prickle/shared/owners/web"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/teamtest"
)

// The flows below run twice: against the in-memory fake (unit tests) and,
// with -tags integration, against the real store on the emulator.

var signer = link.Signer{Key: []byte("0123456789abcdef0123456789abcdef")}

// people are the project and agents every flow needs; a backend stores them its own way.
var (
	project = team.Project{Slug: "website-v2", Name: "Website v2", OwnerApprovalTypes: []string{"code"}, StepDeadline: 24 * time.Hour}
	writer  = team.Agent{ID: "alice/writer", Owner: "alice", Projects: []string{"website-v2"}}
	review  = team.Agent{ID: "bob/reviewer", Owner: "bob", Projects: []string{"website-v2"}}
)

// env is one backend with a web server in front of it.
type env struct {
	t     *testing.T
	store roomBackend
	svc   *team.Service
	srv   *httptest.Server
	clock *clock
	box   *outbox.Outbox
}

type clock struct{ at time.Time }

func (c *clock) now() time.Time { return c.at }

func newEnv(t *testing.T, st roomBackend) *env {
	t.Helper()
	svc := team.New(st)
	c := &clock{at: time.Now().UTC()}
	box := outbox.New()
	h := web.New(web.Config{Service: svc, Store: st, Signer: signer, Outbox: box, Now: c.now, Log: slog.New(slog.DiscardHandler)})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &env{t: t, store: st, svc: svc, srv: srv, clock: c, box: box}
}

// pendingStep creates a working task of alice/writer whose run asks for a git push.
func (e *env) pendingStep(taskID string) step.Step {
	e.t.Helper()
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	tk := task.Task{
		ID: taskID, Project: "website-v2", State: task.Working, Requester: "bob/reviewer", Assignee: "alice/writer",
		Packet:    task.Packet{Task: "Publish the site", DeliverableType: "code", AcceptanceCriteria: []string{"pushed"}, Files: []string{}, DependsOn: []string{}},
		CreatedAt: now, UpdatedAt: now,
	}
	if err := e.store.CreateTask(ctx, tk, task.Event{At: now, By: "bob/reviewer", Action: "hand_off", To: task.Working}); err != nil {
		e.t.Fatal(err)
	}
	run := identity.Caller{Agent: "alice/writer", Owner: "alice", Kind: identity.KindRun, TaskID: taskID, RunID: "run_1"}
	out, err := e.svc.RequestStep(ctx, run, team.RequestStepInput{
		ToolName: "Bash", Input: json.RawMessage(`{"command":"git push origin main && echo <done>"}`),
		Kind: "outbound", Target: "origin", Reason: "Publish the reviewed branch.",
	})
	if err != nil {
		e.t.Fatal(err)
	}
	st, err := e.store.Step(ctx, taskID, out.StepID)
	if err != nil {
		e.t.Fatal(err)
	}
	return st
}

// resultAwaitingApproval creates a task of alice/writer whose accepted result waits for alice.
func (e *env) resultAwaitingApproval(taskID string) task.Task {
	e.t.Helper()
	now := time.Now().UTC().Truncate(time.Millisecond)
	tk := task.Task{
		ID: taskID, Project: "website-v2", State: task.Approval, Requester: "bob/reviewer", Assignee: "alice/writer",
		Packet: task.Packet{Task: "Build the pricing page", DeliverableType: "code", AcceptanceCriteria: []string{"tests pass"}, Files: []string{}, DependsOn: []string{}},
		Result: &task.Result{
			Summary: "Pricing page built; all tests pass.", Provenance: task.ProvenanceAgentGenerated, ReturnedBy: "alice/writer", ReturnedAt: now,
			Evidence: []task.Evidence{
				{Kind: "pull_request", Summary: "PR #12", URL: "https://github.com/acme/site/pull/12"},
				{Kind: "test_output", Summary: "go test ./...", Content: "ok  \tsite\t0.2s"},
				{Kind: "link", Summary: "not a web link", URL: "javascript:alert(1)"},
			},
		},
		CreatedAt: now, UpdatedAt: now,
	}
	if err := e.store.CreateTask(context.Background(), tk, task.Event{At: now, By: "bob/reviewer", Action: "review_accept", To: task.Approval}); err != nil {
		e.t.Fatal(err)
	}
	return tk
}

func (e *env) stepLink(s step.Step) string {
	return e.srv.URL + "/a/" + signer.Sign(link.ForStep(s.TaskID, s.ID, "alice", s.ExpiresAt).DeliveredBy(link.ViaEmail))
}

func (e *env) resultLink(taskID string) string {
	tk, err := e.store.Task(context.Background(), taskID)
	if err != nil {
		e.t.Fatal(err)
	}
	return e.srv.URL + "/a/" + signer.Sign(link.ForResult(taskID, task.ResultRound(tk), "alice", time.Now()).DeliveredBy(link.ViaEmail))
}

type response struct {
	status int
	header http.Header
	body   string // HTML-unescaped, so tests read text as a person would
	raw    string
	url    string
}

func (e *env) do(req *http.Request) response {
	e.t.Helper()
	jar, _ := cookiejar.New(nil)
	resp, err := (&http.Client{Jar: jar}).Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, header: resp.Header, body: html.UnescapeString(string(b)), raw: string(b), url: resp.Request.URL.String()}
}

func (e *env) get(u string) response {
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	return e.do(req)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// post sends the approval form as the page's own form would (csrf from the page).
func (e *env) post(u, csrf, decision, message string) response {
	form := url.Values{"csrf": {csrf}, "decision": {decision}, "message": {message}}
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return e.do(req)
}

func csrfOf(t *testing.T, r response) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(r.raw)
	if m == nil {
		t.Fatalf("no form on the page (status %d):\n%s", r.status, r.body)
	}
	return html.UnescapeString(m[1])
}

func mustContain(t *testing.T, what, body string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(body, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, body)
		}
	}
}

func (e *env) stepStatus(s step.Step) step.Step {
	e.t.Helper()
	got, err := e.store.Step(context.Background(), s.TaskID, s.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	return got
}

// runFlows runs every approval-page flow against a backend.
func runFlows(t *testing.T, newStore func(t *testing.T) roomBackend) {
	t.Run("step: GET never decides, POST approves once, a second POST says who decided", func(t *testing.T) {
		e := newEnv(t, newStore(t))
		s := e.pendingStep("tsk_step_flow")
		u := e.stepLink(s)
		var page response
		for range 3 {
			page = e.get(u)
			if page.status != http.StatusOK {
				t.Fatalf("GET = %d:\n%s", page.status, page.body)
			}
		}
		if got := e.stepStatus(s); got.Status != step.Pending {
			t.Fatalf("after 3 GETs the step is %s, want pending", got.Status)
		}
		mustContain(t, "approval page", page.body, "Bash", `"command": "git push origin main && echo <done>"`, "outbound", "origin",
			"Publish the reviewed branch.", "alice/writer", "tsk_step_flow", "Approve", "Refuse", `name="message"`)
		mustContain(t, "approval page", page.body, fmt.Sprintf("Approve allows exactly this call, once, within %d minutes.", int(step.UseWindow/time.Minute)))
		for h, want := range map[string]string{
			"Content-Security-Policy": "default-src 'self'", "X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer", "Cache-Control": "no-store",
		} {
			if got := page.header.Get(h); !strings.Contains(got, want) {
				t.Errorf("header %s = %q, want %q", h, got, want)
			}
		}
		if strings.Contains(page.raw, "<script") {
			t.Error("the page has a script")
		}

		done := e.post(u, csrfOf(t, page), "approve", "go ahead")
		if done.status != http.StatusOK || !strings.HasSuffix(done.url, "?done=1") {
			t.Fatalf("POST approve = %d at %s:\n%s", done.status, done.url, done.body)
		}
		mustContain(t, "outcome page", done.body, "Your decision is recorded", "Already decided by alice at", "approved")
		if strings.Contains(done.raw, `name="decision"`) {
			t.Error("the outcome page still has decision buttons")
		}
		got := e.stepStatus(s)
		if got.Status != step.Approved || got.DecidedBy != "alice" || got.Message != "go ahead" {
			t.Fatalf("step after approve = %+v", got)
		}

		again := e.post(u, csrfOf(t, page), "refuse", "changed my mind")
		if again.status != http.StatusConflict {
			t.Fatalf("second POST = %d, want 409", again.status)
		}
		mustContain(t, "second POST", again.body, "Already decided by alice at "+got.DecidedAt.UTC().Format(time.RFC3339), "already approved by alice")
		if e.stepStatus(s).Status != step.Approved {
			t.Error("the second POST changed the step")
		}
		reload := e.get(u)
		mustContain(t, "reloaded page", reload.body, "Already decided by alice at")
		if strings.Contains(reload.raw, `name="decision"`) {
			t.Error("a decided step still shows buttons")
		}
	})

	t.Run("step: refuse with a message", func(t *testing.T) {
		e := newEnv(t, newStore(t))
		s := e.pendingStep("tsk_step_refuse")
		u := e.stepLink(s)
		r := e.post(u, csrfOf(t, e.get(u)), "refuse", "not on a Friday")
		mustContain(t, "outcome", r.body, "Already decided by alice at", "refused", `Message: "not on a Friday"`)
		if got := e.stepStatus(s); got.Status != step.Refused || got.Message != "not on a Friday" {
			t.Errorf("step = %+v", got)
		}
	})

	t.Run("result: approve completes the task as owner_approved", func(t *testing.T) {
		e := newEnv(t, newStore(t))
		e.resultAwaitingApproval("tsk_result_flow")
		u := e.resultLink("tsk_result_flow")
		var page response
		for range 3 {
			page = e.get(u)
		}
		mustContain(t, "result page", page.body, "Pricing page built; all tests pass.", "PR #12", "go test ./...", "agent_generated", "Build the pricing page")
		mustContain(t, "result page", page.raw, `href="https://github.com/acme/site/pull/12"`)
		if strings.Contains(page.raw, `href="javascript:`) {
			t.Error("a javascript: URL became a link")
		}
		if tk, _ := e.store.Task(context.Background(), "tsk_result_flow"); tk.State != task.Approval {
			t.Fatalf("after 3 GETs the task is %s", tk.State)
		}
		done := e.post(u, csrfOf(t, page), "approve", "")
		mustContain(t, "outcome", done.body, "Your decision is recorded", "Already decided by alice at", "approved: the task is completed")
		tk, err := e.store.Task(context.Background(), "tsk_result_flow")
		if err != nil || tk.State != task.Completed || tk.Result.Provenance != task.ProvenanceOwnerApproved {
			t.Fatalf("task = %+v, %v", tk, err)
		}
		again := e.post(u, csrfOf(t, page), "refuse", "")
		if again.status != http.StatusConflict {
			t.Fatalf("second POST = %d, want 409", again.status)
		}
		mustContain(t, "second POST", again.body, "Already decided by alice at", "was already decided by")
	})

	t.Run("tampered link is 403 and decides nothing", func(t *testing.T) {
		e := newEnv(t, newStore(t))
		s := e.pendingStep("tsk_tampered")
		good := e.stepLink(s)
		page := e.get(good)
		forged := signer.Sign(link.ForStep(s.TaskID, s.ID, "alice", s.ExpiresAt).DeliveredBy(link.ViaEmail))
		payload, sig, _ := strings.Cut(forged, ".")
		otherOwner := strings.Replace(payload, payload[len(payload)-4:], "AAAA", 1) + "." + sig
		for _, u := range []string{e.srv.URL + "/a/" + otherOwner, e.srv.URL + "/a/not-a-token", good + "x"} {
			if r := e.get(u); r.status != http.StatusForbidden || !strings.Contains(r.body, "not valid") {
				t.Errorf("GET %s = %d", u, r.status)
			}
			if r := e.post(u, csrfOf(t, page), "approve", ""); r.status != http.StatusForbidden {
				t.Errorf("POST %s = %d", u, r.status)
			}
		}
		if e.stepStatus(s).Status != step.Pending {
			t.Error("a tampered link decided the step")
		}
	})

	t.Run("expired link is 410 and decides nothing", func(t *testing.T) {
		e := newEnv(t, newStore(t))
		s := e.pendingStep("tsk_expired")
		u := e.stepLink(s)
		page := e.get(u)
		e.clock.at = s.ExpiresAt.Add(time.Second)
		r := e.get(u)
		if r.status != http.StatusGone || !strings.Contains(r.body, "expired") {
			t.Errorf("GET after expiry = %d:\n%s", r.status, r.body)
		}
		if r := e.post(u, csrfOf(t, page), "approve", ""); r.status != http.StatusGone {
			t.Errorf("POST after expiry = %d", r.status)
		}
		if e.stepStatus(s).Status != step.Pending {
			t.Error("an expired link decided the step")
		}
	})

	t.Run("a form not from the page decides nothing", func(t *testing.T) {
		e := newEnv(t, newStore(t))
		s := e.pendingStep("tsk_csrf")
		u := e.stepLink(s)
		csrf := csrfOf(t, e.get(u))
		if r := e.post(u, "", "approve", ""); r.status != http.StatusForbidden {
			t.Errorf("POST without csrf = %d", r.status)
		}
		other := signer.Sign(link.ForStep(s.TaskID, s.ID, "alice", s.ExpiresAt).DeliveredBy(link.ViaEmail))
		if r := e.post(u, signer.FormToken(other), "approve", ""); r.status != http.StatusForbidden {
			t.Errorf("POST with another link's csrf = %d", r.status)
		}
		form := url.Values{"csrf": {csrf}, "decision": {"approve"}}
		req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Sec-Fetch-Site", "cross-site")
		if r := e.do(req); r.status != http.StatusForbidden {
			t.Errorf("cross-site POST = %d", r.status)
		}
		if r := e.post(u, csrf, "maybe", ""); r.status != http.StatusBadRequest {
			t.Errorf("POST decision=maybe = %d", r.status)
		}
		if r := e.post(u, csrf, "refuse", strings.Repeat("x", web.MaxMessage+1)); r.status != http.StatusBadRequest {
			t.Errorf("POST with a long message = %d", r.status)
		}
		if e.stepStatus(s).Status != step.Pending {
			t.Error("a bad form decided the step")
		}
	})

	t.Run("a withdrawn step shows why there is nothing to decide", func(t *testing.T) {
		e := newEnv(t, newStore(t))
		first := e.pendingStep("tsk_withdrawn")
		run := identity.Caller{Agent: "alice/writer", Owner: "alice", Kind: identity.KindRun, TaskID: "tsk_withdrawn", RunID: "run_1"}
		if _, err := e.svc.RequestStep(context.Background(), run, team.RequestStepInput{ToolName: "Bash", Input: json.RawMessage(`{"command":"ls"}`), Kind: "destructive"}); err != nil {
			t.Fatal(err)
		}
		r := e.get(e.stepLink(first))
		mustContain(t, "withdrawn step", r.body, "Withdrawn")
		if strings.Contains(r.raw, `name="decision"`) {
			t.Error("a withdrawn step shows buttons")
		}
	})
}

func TestDevOutboxRoutes(t *testing.T) {
	box := outbox.New()
	box.Add(outbox.Message{Channel: outbox.ChannelEmail, To: "alice@example.com", Subject: "Approve Bash?", Text: "git push && done", Links: []string{"http://127.0.0.1:3000/a/tok"}})
	box.Add(outbox.Message{Channel: outbox.ChannelWake, To: "http://127.0.0.1:3000/dev/wake", Subject: "wake"})
	srv := httptest.NewServer(web.New(web.Config{Store: teamtest.New(), Signer: signer, Outbox: box}))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/dev/outbox.json")
	if err != nil {
		t.Fatal(err)
	}
	var msgs []map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&msgs); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if len(msgs) != 2 || msgs[0]["channel"] != "email" || msgs[1]["channel"] != "wake" || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("outbox.json = %v", msgs)
	}
	resp, err = http.Get(srv.URL + "/dev/outbox")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	mustContain(t, "outbox page", string(b), `<a href="http://127.0.0.1:3000/a/tok">`, "Approve Bash?", "git push &amp;&amp; done")
	if strings.Index(string(b), "Approve Bash?") > strings.Index(string(b), "/dev/wake") {
		t.Error("the outbox page is not newest last")
	}
	css, err := http.Get(srv.URL + "/static/style.css")
	if err != nil || css.StatusCode != http.StatusOK || !strings.HasPrefix(css.Header.Get("Content-Type"), "text/css") {
		t.Errorf("style.css = %v %v", css, err)
	}

	cloud := httptest.NewServer(web.New(web.Config{Store: teamtest.New(), Signer: signer}))
	defer cloud.Close()
	for _, p := range []string{"/dev/outbox", "/dev/outbox.json"} {
		r, err := http.Get(cloud.URL + p)
		if err != nil || r.StatusCode != http.StatusNotFound {
			t.Errorf("without an outbox, GET %s = %v %v; want 404", p, r.StatusCode, err)
		}
	}
}
