package web_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/domain/audit"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/teamtest"
)

var regexpRound = regexp.MustCompile(`name="round" value="([^"]+)"`)

// alice's second agent in website-v2: the requester of what alice creates on the board.
var builder = team.Agent{ID: "alice/builder", Owner: "alice", Projects: []string{"website-v2"}}

func TestBoardTasksInMemory(t *testing.T) {
	runBoardTasks(t, func(t *testing.T) roomBackend {
		st := newFakeRoom(t)
		st.(*teamtest.Store).AddAgent(builder)
		return st
	})
}

// newTaskForm is the board's form filled as alice would.
func newTaskForm(csrf string) url.Values {
	return url.Values{"csrf": {csrf}, "requester": {"alice/builder"}, "assignee": {"alice/writer"},
		"task": {"Write the launch post."}, "deliverable_type": {"doc"},
		"acceptance_criteria": {"At most 300 words.\r\n\r\n  Links the demo.  \r\n"}, "context": {"For the blog."},
		"files": {"blog/launch.md"}, "depends_on": {""}}
}

// postWith sends a form with the browser's cookies and extra headers (another site's Origin).
func (b *browser) postWith(path string, form url.Values, header http.Header) roomResp {
	b.e.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, b.e.srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range header {
		req.Header[k] = v
	}
	for _, c := range b.cookies {
		req.AddCookie(c)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		b.e.t.Fatal(err)
	}
	defer resp.Body.Close()
	return roomResp{status: resp.StatusCode, header: resp.Header}
}

// tasksOf lists the project's tasks straight from the store.
func (e *roomEnv) tasksOf(project string) []task.Task {
	e.t.Helper()
	pg, err := e.store.ListTasks(context.Background(), team.TaskQuery{Project: project, Role: task.RoleAny, Limit: 100})
	if err != nil {
		e.t.Fatal(err)
	}
	return pg.Tasks
}

func runBoardTasks(t *testing.T, newStore func(t *testing.T) roomBackend) {
	t.Run("alice creates a task on the board as alice/builder, then reviews its result on the task page", func(t *testing.T) {
		e := newRoomEnv(t, newStore(t))
		alice := e.signIn("alice")
		board := alice.get("/p/website-v2/tasks")
		if board.status != http.StatusOK {
			t.Fatalf("board = %d", board.status)
		}
		mustContain(t, "the board", board.raw, `id="new-task-form"`, `<option value="alice/builder"`, `name="acceptance_criteria"`)
		if strings.Contains(board.raw, `id="nt-requester" name="requester" required><option value="bob/reviewer"`) {
			t.Fatal("the requester list offers bob's agent")
		}
		r := alice.do(http.MethodPost, "/p/website-v2/tasks", newTaskForm(formToken(t, board)))
		loc := r.header.Get("Location")
		if r.status != http.StatusSeeOther || !strings.HasPrefix(loc, "../../t/") || !strings.HasSuffix(loc, "?decided=created") {
			t.Fatalf("create = %d %s:\n%s", r.status, loc, r.text)
		}
		id := strings.TrimSuffix(strings.TrimPrefix(loc, "../../t/"), "?decided=created")
		tk, err := e.store.Task(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if tk.Requester != "alice/builder" || tk.Assignee != "alice/writer" || tk.State != task.Routed || tk.Packet.Task != "Write the launch post." ||
			!slices.Equal(tk.Packet.AcceptanceCriteria, []string{"At most 300 words.", "Links the demo."}) || !slices.Equal(tk.Packet.Files, []string{"blog/launch.md"}) ||
			tk.Packet.DependsOn == nil || len(tk.Packet.DependsOn) != 0 || tk.Packet.Context != "For the blog." {
			t.Fatalf("task %+v", tk)
		}
		hist, _ := e.store.History(context.Background(), id)
		if len(hist) != 1 || hist[0].By != "owner:alice" || hist[0].Note == nil || !strings.Contains(*hist[0].Note, "by alice on the project board (signed in by") || !strings.Contains(*hist[0].Note, "as alice/builder") {
			t.Fatalf("history %+v (note %v)", hist, hist[0].Note)
		}
		page := alice.get("/t/" + id + "?decided=created")
		mustContain(t, "the task page", page.text, "Task created on the board", "by owner:alice", "by alice on the project board")
		mustContain(t, "the board", alice.get("/p/website-v2/tasks").text, "Write the launch post.")

		// The writer returns a result: alice reviews it for alice/builder.
		w := identity.Caller{Agent: "alice/writer", Owner: "alice", Kind: identity.KindAgent}
		if _, err := e.svc.AcceptTask(context.Background(), w, team.AcceptInput{TaskID: id}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.svc.ReturnResult(context.Background(), w, team.ReturnResultInput{TaskID: id, Summary: "Draft one.", Evidence: []task.Evidence{{Kind: "link", Summary: "the draft", URL: "https://example.org/draft"}}}); err != nil {
			t.Fatal(err)
		}
		page = alice.get("/t/" + id)
		mustContain(t, "the task page", page.raw, `id="review-result"`, `value="rework"`)
		csrf := formToken(t, page)
		round := regexpRound.FindStringSubmatch(page.raw)
		if round == nil {
			t.Fatal("no round on the review form")
		}
		// Rework without feedback: review_result's own refusal, nothing moves.
		bad := alice.do(http.MethodPost, "/t/"+id, url.Values{"csrf": {csrf}, "round": {round[1]}, "review": {"rework"}})
		if bad.status != http.StatusConflict || !strings.Contains(bad.text, "needs feedback") {
			t.Fatalf("rework without feedback = %d:\n%s", bad.status, bad.text)
		}
		// A verdict not in the schema's enum: the catalog's message.
		bad = alice.do(http.MethodPost, "/t/"+id, url.Values{"csrf": {csrf}, "round": {round[1]}, "review": {"approve-all"}})
		if bad.status != http.StatusBadRequest || !strings.Contains(bad.text, "invalid arguments for review_result") {
			t.Fatalf("a bad verdict = %d:\n%s", bad.status, bad.text)
		}
		// Feedback over review_result's bound.
		bad = alice.do(http.MethodPost, "/t/"+id, url.Values{"csrf": {csrf}, "round": {round[1]}, "review": {"rework"}, "feedback": {strings.Repeat("x", 2001)}})
		if bad.status != http.StatusBadRequest || !strings.Contains(bad.text, "invalid arguments for review_result") {
			t.Fatalf("long feedback = %d:\n%s", bad.status, bad.text)
		}
		// A stale round is refused.
		bad = alice.do(http.MethodPost, "/t/"+id, url.Values{"csrf": {csrf}, "round": {"2020-01-01T00:00:00Z"}, "review": {"accept"}})
		if bad.status != http.StatusConflict || !strings.Contains(bad.text, "no longer the current one") {
			t.Fatalf("a stale round = %d:\n%s", bad.status, bad.text)
		}
		// bob (signed in) may not review alice/builder's result.
		bob := e.signIn("bob")
		bp := bob.get("/t/" + id)
		if strings.Contains(bp.raw, `id="review-result"`) {
			t.Fatal("bob is offered the review form")
		}
		if r := bob.do(http.MethodPost, "/t/"+id, url.Values{"csrf": {formToken(t, bp)}, "round": {round[1]}, "review": {"accept"}}); r.status != http.StatusConflict || !strings.Contains(r.text, "is not one of your agents") {
			t.Fatalf("bob's review = %d:\n%s", r.status, r.text)
		}
		if tk, _ := e.store.Task(context.Background(), id); tk.State != task.Verifying {
			t.Fatalf("a refused review moved the task: %s", tk.State)
		}
		r = alice.do(http.MethodPost, "/t/"+id, url.Values{"csrf": {csrf}, "round": {round[1]}, "review": {"rework"}, "feedback": {"Shorter, please."}})
		if r.status != http.StatusSeeOther || r.header.Get("Location") != id+"?decided=rework" {
			t.Fatalf("rework = %d %s:\n%s", r.status, r.header.Get("Location"), r.text)
		}
		tk, _ = e.store.Task(context.Background(), id)
		hist, _ = e.store.History(context.Background(), id)
		last := hist[len(hist)-1]
		if tk.State != task.Working || last.Action != "review_rework" || last.By != "owner:alice" || last.Note == nil ||
			!strings.HasPrefix(*last.Note, "Shorter, please.") || !strings.Contains(*last.Note, "on the task page") {
			t.Fatalf("after rework: %s, %+v", tk.State, last)
		}
		if _, err := e.svc.ReturnResult(context.Background(), w, team.ReturnResultInput{TaskID: id, Summary: "Draft two.", Evidence: []task.Evidence{{Kind: "link", Summary: "the draft", URL: "https://example.org/draft2"}}}); err != nil {
			t.Fatal(err)
		}
		page = alice.get("/t/" + id)
		round = regexpRound.FindStringSubmatch(page.raw)
		r = alice.do(http.MethodPost, "/t/"+id, url.Values{"csrf": {formToken(t, page)}, "round": {round[1]}, "review": {"accept"}})
		if r.status != http.StatusSeeOther || r.header.Get("Location") != id+"?decided=accepted" {
			t.Fatalf("accept = %d %s:\n%s", r.status, r.header.Get("Location"), r.text)
		}
		// website-v2 asks the owner's approval of docs: the accept waits for it.
		if tk, _ := e.store.Task(context.Background(), id); tk.State != task.Approval {
			t.Fatalf("after accept: %s", tk.State)
		}

		// The audit says the owner did it, and where; the history lines are not there twice.
		entries, err := e.svc.ProjectAudit(context.Background(), "website-v2")
		if err != nil {
			t.Fatal(err)
		}
		var mine []audit.Entry
		for _, en := range entries {
			if en.TaskID == id && en.Actor == "owner:alice" {
				mine = append(mine, en)
			}
		}
		want := []string{"hand_off project board", "review_rework task page", "review_accept task page"}
		if len(mine) != len(want) {
			t.Fatalf("owner entries %+v", mine)
		}
		for i, en := range mine {
			a, via, _ := strings.Cut(want[i], " ")
			if en.Action != a || !strings.HasPrefix(en.Via, via+" (signed in by") || !strings.Contains(en.Detail, "as alice/builder") {
				t.Errorf("entry %d = %+v, want %s via %s", i, en, a, via)
			}
		}
	})

	t.Run("attacks and bounds: nothing is created", func(t *testing.T) {
		e := newRoomEnv(t, newStore(t))
		alice := e.signIn("alice")
		board := alice.get("/p/website-v2/tasks")
		csrf := formToken(t, board)
		before := len(e.tasksOf("website-v2"))
		for _, tc := range []struct {
			name   string
			edit   func(url.Values)
			status int
			says   string
		}{
			{"another owner's agent as requester", func(f url.Values) { f.Set("requester", "bob/reviewer"); f.Set("assignee", "alice/writer") }, http.StatusConflict, "bob/reviewer is not one of your agents"},
			{"an agent that does not exist as requester", func(f url.Values) { f.Set("requester", "alice/ghost") }, http.StatusConflict, "alice/ghost is not one of your agents"},
			{"another owner's agent of another project as requester", func(f url.Values) { f.Set("requester", "carol/tester") }, http.StatusConflict, "carol/tester is not one of your agents"},
			{"a task to itself", func(f url.Values) { f.Set("assignee", "alice/builder") }, http.StatusConflict, "may not hand a task to itself"},
			{"an assignee outside the project", func(f url.Values) { f.Set("assignee", "carol/tester") }, http.StatusConflict, "assignee carol/tester is not an agent of project website-v2"},
			{"an assignee not of the schema's pattern", func(f url.Values) { f.Set("assignee", "Alice Writer") }, http.StatusBadRequest, "invalid arguments for hand_off_task"},
			{"an empty task", func(f url.Values) { f.Set("task", "  ") }, http.StatusBadRequest, "invalid arguments for hand_off_task"},
			{"a task over 500 characters", func(f url.Values) { f.Set("task", strings.Repeat("é", 501)) }, http.StatusBadRequest, "invalid arguments for hand_off_task"},
			{"no acceptance criteria", func(f url.Values) { f.Set("acceptance_criteria", "\r\n \r\n") }, http.StatusBadRequest, "invalid arguments for hand_off_task"},
			{"21 acceptance criteria", func(f url.Values) { f.Set("acceptance_criteria", strings.Repeat("ok\n", 21)) }, http.StatusBadRequest, "invalid arguments for hand_off_task"},
			{"a type not in the enum", func(f url.Values) { f.Set("deliverable_type", "poem") }, http.StatusBadRequest, "invalid arguments for hand_off_task"},
			{"context over 4000 characters", func(f url.Values) { f.Set("context", strings.Repeat("c", 4001)) }, http.StatusBadRequest, "invalid arguments for hand_off_task"},
			{"51 files", func(f url.Values) { f.Set("files", strings.Repeat("a.md\n", 51)) }, http.StatusBadRequest, "invalid arguments for hand_off_task"},
			{"a dependency that is no task of the project", func(f url.Values) { f.Set("depends_on", "tsk_nope") }, http.StatusConflict, "depends_on names tsk_nope"},
		} {
			f := newTaskForm(csrf)
			tc.edit(f)
			r := alice.do(http.MethodPost, "/p/website-v2/tasks", f)
			if r.status != tc.status || !strings.Contains(r.text, "Nothing was created") || !strings.Contains(r.text, tc.says) {
				t.Errorf("%s = %d, want %d saying %q:\n%s", tc.name, r.status, tc.status, tc.says, r.text)
				continue
			}
			// The form comes back open with what alice sent.
			if !strings.Contains(r.raw, `id="new-task" open`) || !strings.Contains(r.text, f.Get("context")) {
				t.Errorf("%s: the form is not shown again with what was sent", tc.name)
			}
		}
		// Cross-site: another site's form, a missing or foreign CSRF token, no session.
		for _, tc := range []struct {
			name   string
			b      *browser
			form   url.Values
			header http.Header
			status int
		}{
			{"another site's Origin", alice, newTaskForm(csrf), http.Header{"Origin": {"https://evil.example"}}, http.StatusForbidden},
			{"a cross-site fetch", alice, newTaskForm(csrf), http.Header{"Sec-Fetch-Site": {"cross-site"}}, http.StatusForbidden},
			{"no CSRF token", alice, newTaskForm(""), nil, http.StatusForbidden},
			{"bob's CSRF token in alice's session", alice, newTaskForm(formToken(t, e.signIn("bob").get("/p/website-v2/tasks"))), nil, http.StatusForbidden},
		} {
			if r := tc.b.postWith("/p/website-v2/tasks", tc.form, tc.header); r.status != tc.status {
				t.Errorf("%s = %d, want %d", tc.name, r.status, tc.status)
			}
		}
		if r := e.browser().do(http.MethodPost, "/p/website-v2/tasks", newTaskForm(csrf)); r.status == http.StatusSeeOther && strings.Contains(r.header.Get("Location"), "/t/") {
			t.Errorf("without a session = %d %s", r.status, r.header.Get("Location"))
		}
		// A project alice is not in is a 404, as one that does not exist.
		if r := alice.do(http.MethodPost, "/p/mobile-app/tasks", newTaskForm(csrf)); r.status != http.StatusNotFound {
			t.Errorf("a project alice is not in = %d:\n%s", r.status, r.text)
		}
		if r := alice.do(http.MethodPost, "/p/no-such/tasks", newTaskForm(csrf)); r.status != http.StatusNotFound {
			t.Errorf("a project that does not exist = %d", r.status)
		}
		if after := len(e.tasksOf("website-v2")); after != before {
			t.Fatalf("tasks %d → %d: a refused form created one", before, after)
		}
		if n := len(e.tasksOf("mobile-app")); n != 0 {
			t.Fatalf("mobile-app has %d tasks", n)
		}
	})
}
