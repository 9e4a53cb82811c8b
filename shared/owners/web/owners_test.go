package web_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/auth/oauthstate"
	"github.com/useprickle/prickle/shared/domain/audit"
	"github.com/useprickle/prickle/shared/domain/budget"
	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/team"
)

func TestOwnersInMemory(t *testing.T) { runOwners(t, newFakeRoom) }

var grantIDOnPage = regexp.MustCompile(`data-grant="(grt_[a-z0-9]+)"`)

// push asks for `git push origin <branch>` as alice/writer's run on a task, as Claude Code's permission prompt does.
func (e *roomEnv) push(taskID, branch, toolUseID string) team.RequestStepOutput {
	e.t.Helper()
	run := identity.Caller{Agent: "alice/writer", Owner: "alice", Kind: identity.KindRun, TaskID: taskID, RunID: "run_" + taskID}
	out, err := e.svc.RequestStep(context.Background(), run, team.RequestStepInput{
		ToolName: "Bash", Input: json.RawMessage(`{"command":"git push origin ` + branch + `"}`), ToolUseID: toolUseID, Kind: "outbound", Target: "origin",
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

func runOwners(t *testing.T, newStore func(t *testing.T) roomBackend) {
	t.Run("owners page: joined runners are listed, and only their owner revokes them, same-origin with the form token", func(t *testing.T) {
		e := newRoomEnv(t, newStore(t))
		ctx := context.Background()
		secret := "prk_a_joined-runner-secret"
		hash := identity.Hash(secret)
		if ts, ok := e.store.(interface {
			PutToken(context.Context, identity.Token) error
		}); ok {
			if err := ts.PutToken(ctx, identity.Token{Hash: hash, Kind: identity.KindAgent, Agent: "alice/writer", CreatedAt: time.Now()}); err != nil {
				t.Fatal(err)
			}
		}
		if err := e.store.PutJoinedRunner(ctx, oauthstate.JoinedRunner{ID: "rnr_one", Owner: "alice", Agent: "alice/writer", Name: "<b>laptop</b>",
			TokenHash: hash, CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
		alice := e.signIn("alice")
		page := alice.get("/p/website-v2/owners")
		if !strings.Contains(page.raw, `data-runner="rnr_one"`) || !strings.Contains(page.raw, "&lt;b&gt;laptop&lt;/b&gt;") || !strings.Contains(page.raw, "runs <strong>alice/writer</strong>") {
			t.Fatalf("alice's owners page does not list her runner, escaped:\n%s", page.raw)
		}
		bob := e.signIn("bob")
		bobPage := bob.get("/p/website-v2/owners")
		if strings.Contains(bobPage.raw, `data-runner="rnr_one"`) {
			t.Errorf("bob's owners page lists alice's runner")
		}
		if r := bob.do(http.MethodPost, "/p/website-v2/runners/rnr_one/revoke", url.Values{"csrf": {formToken(t, bobPage)}}); r.status != http.StatusConflict {
			t.Errorf("bob revoking alice's runner = %d, want 409", r.status)
		}
		if r := alice.do(http.MethodPost, "/p/website-v2/runners/rnr_one/revoke", nil); r.status != http.StatusForbidden {
			t.Errorf("revoke without the form token = %d, want 403", r.status)
		}
		if page := alice.get("/p/website-v2/owners"); !strings.Contains(page.raw, `data-runner="rnr_one"`) {
			t.Fatalf("a refused revocation revoked")
		}
		r := alice.do(http.MethodPost, "/p/website-v2/runners/rnr_one/revoke", url.Values{"csrf": {formToken(t, page)}})
		if r.status != http.StatusSeeOther || r.header.Get("Location") != "../../owners?done=runner" {
			t.Fatalf("revoke = %d %s:\n%s", r.status, r.header.Get("Location"), r.text)
		}
		page = alice.get("/p/website-v2/owners?done=runner")
		if strings.Contains(page.raw, `data-runner="rnr_one"`) || !strings.Contains(page.text, "Runner revoked") {
			t.Fatalf("after revoking:\n%s", page.text)
		}
		if tl, ok := e.store.(interface {
			TokenByHash(context.Context, string) (identity.Token, error)
		}); ok {
			if tok, err := tl.TokenByHash(ctx, hash); err != nil || !tok.Revoked {
				t.Fatalf("the runner's token after Revoke: %+v %v, want revoked", tok, err)
			}
		}
		trail, err := e.store.ProjectAudit(ctx, "website-v2")
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(trail, func(en audit.Entry) bool {
			return en.Action == audit.TokenRevoked && en.Actor == "alice" && strings.Contains(en.Detail, "rnr_one")
		}) {
			t.Errorf("no token_revoked entry by alice for rnr_one in %+v", trail)
		}
	})
	t.Run("task page: approve with a pattern grant, later pushes are allowed, revoking asks again", func(t *testing.T) {
		e := newRoomEnv(t, newStore(t))
		tk := e.workingTask("tsk_grant", "alice/writer", "bob/reviewer")
		asked := e.push(tk.ID, "main", "tu_1")
		alice := e.signIn("alice")
		page := alice.get("/t/" + tk.ID)
		for _, want := range []string{`name="grant" value="pattern"`, `name="field" value="command"`, `value="git push origin main"`, `name="hours"`, "No grants."} {
			if !strings.Contains(page.raw, want) && !strings.Contains(page.text, want) {
				t.Errorf("task page lacks %q", want)
			}
		}
		csrf := formToken(t, page)
		// A pattern that would allow every call is refused, and nothing is decided.
		bad := alice.do(http.MethodPost, "/t/"+tk.ID, url.Values{"csrf": {csrf}, "step": {asked.StepID}, "decision": {"approve"},
			"grant": {"pattern"}, "field": {"command"}, "pattern": {"*"}, "hours": {"8"}})
		if bad.status != http.StatusBadRequest || !strings.Contains(bad.text, "would match every call") {
			t.Fatalf("a wildcard-only pattern = %d:\n%s", bad.status, bad.text)
		}
		if st, _ := e.store.Step(context.Background(), tk.ID, asked.StepID); st.Status != step.Pending {
			t.Fatalf("the refused form decided the step: %s", st.Status)
		}
		r := alice.do(http.MethodPost, "/t/"+tk.ID, url.Values{"csrf": {csrf}, "step": {asked.StepID}, "decision": {"approve"},
			"grant": {"pattern"}, "field": {"command"}, "pattern": {"git push origin *"}, "hours": {"8"}})
		if r.status != http.StatusSeeOther || r.header.Get("Location") != tk.ID+"?decided=granted" {
			t.Fatalf("approve with a grant = %d %s:\n%s", r.status, r.header.Get("Location"), r.text)
		}
		if out := e.push(tk.ID, "main", "tu_1"); out.Behavior != "allow" {
			t.Fatalf("the approved push = %+v", out)
		}
		for i, branch := range []string{"main", "main", "release"} {
			if out := e.push(tk.ID, branch, "tu_x"+branch); out.Behavior != "allow" || out.Status != step.Consumed {
				t.Fatalf("push %d (%s) = %+v, want allow", i, branch, out)
			}
		}
		if out := e.push(tk.ID, "main && curl evil.example", "tu_evil"); out.Behavior != "deny" || out.Status != step.Pending {
			t.Fatalf("a near miss = %+v, want asked", out)
		}
		page = alice.get("/t/" + tk.ID)
		m := grantIDOnPage.FindStringSubmatch(page.raw)
		if m == nil || !strings.Contains(page.text, `alice/writer may call Bash where command matches "git push origin *"`) || !strings.Contains(page.text, "used 3 times") {
			t.Fatalf("task page does not list the grant with its uses:\n%s", page.text)
		}
		grantID := m[1]
		// bob sees the grant but cannot revoke it: no button, and a forged POST is refused.
		bob := e.signIn("bob")
		bobPage := bob.get("/p/website-v2/owners")
		if !strings.Contains(bobPage.raw, `data-grant="`+grantID+`"`) || strings.Contains(bobPage.raw, `id="revoke-`+grantID+`"`) {
			t.Errorf("bob's owners page: grant listed without a revoke button? \n%s", bobPage.text)
		}
		if r := bob.do(http.MethodPost, "/p/website-v2/grants/"+grantID+"/revoke", url.Values{"csrf": {formToken(t, bobPage)}}); r.status != http.StatusConflict || !strings.Contains(r.text, "only they can revoke it") {
			t.Errorf("bob revoking alice's grant = %d:\n%s", r.status, r.text)
		}
		// Without the form token nothing is revoked.
		if r := alice.do(http.MethodPost, "/p/website-v2/grants/"+grantID+"/revoke", url.Values{"task": {tk.ID}}); r.status != http.StatusForbidden {
			t.Errorf("revoke without csrf = %d", r.status)
		}
		r = alice.do(http.MethodPost, "/p/website-v2/grants/"+grantID+"/revoke", url.Values{"csrf": {csrf}, "task": {tk.ID}})
		if r.status != http.StatusSeeOther || r.header.Get("Location") != "../../../../t/"+tk.ID+"?decided=revoked" {
			t.Fatalf("revoke = %d %s:\n%s", r.status, r.header.Get("Location"), r.text)
		}
		if out := e.push(tk.ID, "main", "tu_after"); out.Status != step.Pending {
			t.Fatalf("after revoking, push = %+v, want asked again", out)
		}
		if page := alice.get("/t/" + tk.ID + "?decided=revoked"); !strings.Contains(page.text, "revoked") || strings.Contains(page.raw, `id="revoke-`+grantID+`"`) {
			t.Errorf("task page after revoking:\n%s", page.text)
		}
	})

	t.Run("task page: the grant form says how its field's pattern reads; a path grant stays in its directory", func(t *testing.T) {
		e := newRoomEnv(t, newStore(t))
		tk := e.workingTask("tsk_paths", "alice/writer", "bob/reviewer")
		run := identity.Caller{Agent: "alice/writer", Owner: "alice", Kind: identity.KindRun, TaskID: tk.ID, RunID: "run_paths"}
		write := func(path, toolUseID string) team.RequestStepOutput {
			t.Helper()
			in, _ := json.Marshal(map[string]string{"file_path": path, "content": "x"})
			out, err := e.svc.RequestStep(context.Background(), run, team.RequestStepInput{ToolName: "Write", Input: in, ToolUseID: toolUseID, Kind: "destructive"})
			if err != nil {
				t.Fatal(err)
			}
			return out
		}
		const src = "/srv/site/src/"
		asked := write(src+"index.html", "tu_1")
		alice := e.signIn("alice")
		page := alice.get("/t/" + tk.ID)
		for _, want := range []string{`name="field" value="file_path"`, `value="` + src + `index.html"`,
			"are read as paths", "<code>/srv/app/src/*</code>", `<code class="refuses">/srv/app/src/../.github/workflows/deploy.yml</code>`} {
			if !strings.Contains(page.raw, want) {
				t.Errorf("task page lacks %q", want)
			}
		}
		csrf := formToken(t, page)
		if r := alice.do(http.MethodPost, "/t/"+tk.ID, url.Values{"csrf": {csrf}, "step": {asked.StepID}, "decision": {"approve"},
			"grant": {"pattern"}, "field": {"file_path"}, "pattern": {src + "../*"}, "hours": {"8"}}); r.status != http.StatusBadRequest || !strings.Contains(r.text, "cannot hold a .. name") {
			t.Fatalf("a pattern with .. = %d:\n%s", r.status, r.text)
		}
		if r := alice.do(http.MethodPost, "/t/"+tk.ID, url.Values{"csrf": {csrf}, "step": {asked.StepID}, "decision": {"approve"},
			"grant": {"pattern"}, "field": {"file_path"}, "pattern": {src + "*"}, "hours": {"8"}}); r.status != http.StatusSeeOther {
			t.Fatalf("approve with a path grant = %d:\n%s", r.status, r.text)
		}
		for i, c := range []struct {
			path    string
			allowed bool
		}{{src + "about.html", true}, {src + "../.github/workflows/deploy.yml", false}, {src + "assets/app.js", false}, {src + ".env", false}} {
			if out := write(c.path, fmt.Sprintf("tu_w%d", i)); (out.Behavior == "allow") != c.allowed {
				t.Errorf("Write %s = %+v, want allowed %v", c.path, out, c.allowed)
			}
		}
		// A Bash step's form explains commands, with the reviewed near misses.
		push := e.push(tk.ID, "main", "tu_p")
		page = alice.get("/t/" + tk.ID)
		for _, want := range []string{"is read as a shell command", `<code class="refuses">git push origin --delete main</code>`, `<code class="refuses">git push origin :main</code>`,
			`<code class="refuses">git push origin main --exec=/tmp/evil</code>`, "<code>; &amp; | &lt; &gt; ` $ ( ) \\</code>"} {
			if !strings.Contains(page.raw, want) {
				t.Errorf("task page (step %s) lacks %q", push.StepID, want)
			}
		}
	})

	t.Run("owners page: budgets per owner, today's spend, audit downloads; outsiders get 404", func(t *testing.T) {
		e := newRoomEnv(t, newStore(t))
		tk := e.workingTask("tsk_budget", "alice/writer", "bob/reviewer")
		e.clock.at = e.clock.at.Add(time.Second)
		alice := e.signIn("alice")
		page := alice.get("/p/website-v2/owners")
		if page.status != http.StatusOK || !strings.Contains(page.text, "No budgets yet.") || !strings.Contains(page.raw, `href="audit.csv"`) {
			t.Fatalf("owners page = %d:\n%s", page.status, page.text)
		}
		csrf := formToken(t, page)
		for _, bad := range []url.Values{{"unit": {"US D"}, "limit": {"50"}}, {"unit": {"USD"}, "limit": {"-3"}}, {"unit": {"USD"}, "limit": {"lots"}}} {
			bad.Set("csrf", csrf)
			if r := alice.do(http.MethodPost, "/p/website-v2/budgets", bad); r.status != http.StatusConflict || !strings.Contains(r.text, "Nothing was changed") {
				t.Errorf("budget %v = %d", bad, r.status)
			}
		}
		if r := alice.do(http.MethodPost, "/p/website-v2/budgets", url.Values{"unit": {"USD"}, "limit": {"50"}, "auto_allow": {"on"}, "amount_field": {"usd"}}); r.status != http.StatusForbidden {
			t.Errorf("budget without csrf = %d", r.status)
		}
		// Auto-allow without saying where a call holds its amount would trust what agents declare.
		if r := alice.do(http.MethodPost, "/p/website-v2/budgets", url.Values{"csrf": {csrf}, "unit": {"USD"}, "limit": {"50"}, "auto_allow": {"on"}}); r.status != http.StatusConflict || !strings.Contains(r.text, "auto-allow needs the input field") {
			t.Errorf("auto-allow without an amount field = %d:\n%s", r.status, r.text)
		}
		r := alice.do(http.MethodPost, "/p/website-v2/budgets", url.Values{"csrf": {csrf}, "unit": {"USD"}, "limit": {"50"}, "auto_allow": {"on"}, "amount_field": {"usd"}})
		if r.status != http.StatusSeeOther {
			t.Fatalf("set budget = %d:\n%s", r.status, r.text)
		}
		// bob's budget was stored before budgets named their amount field.
		if err := e.store.PutBudget(context.Background(), budget.Budget{Project: "website-v2", Owner: "bob", Unit: "EUR", PerAgentPerDay: 9 * budget.Scale, AutoAllow: true, SetBy: "bob", SetAt: e.clock.now()}); err != nil {
			t.Fatal(err)
		}
		e.clock.at = e.clock.at.Add(time.Second)
		run := identity.Caller{Agent: "alice/writer", Owner: "alice", Kind: identity.KindRun, TaskID: tk.ID, RunID: "run_b"}
		spend := func(n int, value float64) team.RequestStepOutput {
			out, err := e.svc.RequestStep(context.Background(), run, team.RequestStepInput{ToolName: "buy", Input: json.RawMessage(fmt.Sprintf(`{"n":%d,"usd":%v}`, n, value)),
				ToolUseID: "tu", Kind: "spending", Amount: &step.Amount{Value: value, Unit: "USD"}})
			if err != nil {
				t.Fatal(err)
			}
			return out
		}
		if out := spend(1, 30); out.Behavior != "allow" {
			t.Fatalf("30 of 50 USD = %+v", out)
		}
		e.clock.at = e.clock.at.Add(time.Second)
		asked := spend(2, 30)
		if asked.Behavior != "deny" || !strings.Contains(asked.Message, "20 USD left of 50 USD") {
			t.Fatalf("30 more = %+v, want asked with what is left", asked)
		}
		page = alice.get("/p/website-v2/owners?done=budget")
		for _, want := range []string{"Budget saved.", "A budget caps declared spend:",
			`<td>alice <span class="tag">you</span></td><td>USD</td><td>50</td><td>input field usd of any call</td><td>on</td>`,
			`<td>bob</td><td>EUR</td><td>9</td><td>nowhere</td><td>asks every time: no amount field named</td>`,
			`id="budget-field" name="amount_field" type="text" maxlength="64" value="usd"`,
			"<td>alice/writer</td><td>USD</td><td>30</td><td>20</td>"} {
			if !strings.Contains(page.raw, want) {
				t.Errorf("owners page lacks %q:\n%s", want, page.raw)
			}
		}
		// Approved by hand, the 30 USD count at once, over the budget.
		e.clock.at = e.clock.at.Add(time.Second)
		if r := alice.do(http.MethodPost, "/t/"+tk.ID, url.Values{"csrf": {csrf}, "step": {asked.StepID}, "decision": {"approve"}}); r.status != http.StatusSeeOther {
			t.Fatalf("approve the spend = %d:\n%s", r.status, r.text)
		}
		if page := alice.get("/p/website-v2/owners"); !strings.Contains(page.raw, "<td>alice/writer</td><td>USD</td><td>60</td><td>0</td>") {
			t.Errorf("right after the approval the owners page does not count it:\n%s", page.raw)
		}
		csvResp := alice.get("/p/website-v2/audit.csv")
		if csvResp.status != http.StatusOK || !strings.HasPrefix(csvResp.header.Get("Content-Type"), "text/csv") || !strings.Contains(csvResp.header.Get("Content-Disposition"), "attachment") {
			t.Fatalf("audit.csv = %d %v", csvResp.status, csvResp.header)
		}
		rows, err := csv.NewReader(strings.NewReader(csvResp.raw)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, row := range rows[1:] {
			got = append(got, row[2]+" "+row[3]+" "+row[4])
		}
		want := []string{"hand_off bob/reviewer mcp", "budget_set owner:alice owners page (signed in by email link)", "step_allowed owner:alice budget USD", "step_asked alice/writer mcp", "step_approved owner:alice task page (signed in by email link)"}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("audit rows = %q, want %q", got, want)
		}
		jsonResp := alice.get("/p/website-v2/audit.json")
		var entries []map[string]any
		if err := json.Unmarshal([]byte(jsonResp.raw), &entries); err != nil || len(entries) != len(want) {
			t.Errorf("audit.json = %d entries, %v", len(entries), err)
		}
		carol := e.signIn("carol")
		for _, path := range []string{"/p/website-v2/owners", "/p/website-v2/audit.csv", "/p/website-v2/audit.json"} {
			if r := carol.get(path); r.status != http.StatusNotFound {
				t.Errorf("carol GET %s = %d, want 404", path, r.status)
			}
		}
		if r := carol.do(http.MethodPost, "/p/website-v2/budgets", url.Values{"csrf": {formToken(t, carol.get("/"))}, "unit": {"USD"}, "limit": {"1"}}); r.status != http.StatusNotFound {
			t.Errorf("carol setting a budget in website-v2 = %d", r.status)
		}
		if r := e.browser().get("/p/website-v2/audit.csv"); r.status == http.StatusOK {
			t.Errorf("audit.csv without a session = %d", r.status)
		}
	})
}
