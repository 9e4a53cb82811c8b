package slack_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/domain/audit"
	"github.com/useprickle/prickle/shared/domain/modelspend"
	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/owners/notify"
	"github.com/useprickle/prickle/shared/owners/notify/outbox"
	"github.com/useprickle/prickle/shared/owners/slack"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/teamtest"
)

// The flows run twice: on the in-memory backend here and, with -tags
// integration, on the DynamoDB store over the emulator.

func TestFlowsInMemory(t *testing.T) {
	runFlows(t, memoryBackend)
}

// memoryBackend is the team store, owners, ledger and replay markers in memory.
func memoryBackend(*testing.T) backend {
	st := teamtest.New()
	st.AddProject(project)
	st.AddAgent(writer)
	st.AddAgent(review)
	m := &memory{owners: map[string]team.Owner{}, seen: map[string]bool{}}
	for _, o := range owners {
		m.owners[o.Name] = o
	}
	return backend{store: st, owners: m, ledger: &ledger{sent: map[string]bool{}, refs: map[string][2]string{}}, replays: m}
}

// settled checks the step's Slack message was updated in place: the last
// Slack message edits the first one (same ts), has no buttons, and says want.
func (h *harness) settled(want ...string) {
	h.t.Helper()
	posted, updates := h.messages(""), h.messages("updated: ")
	if len(updates) == 0 {
		h.t.Fatalf("the Slack message was not updated: %+v", h.box.List())
	}
	last := updates[len(updates)-1]
	if last.UpdateOf != posted[0].TS {
		h.t.Errorf("update edits %q, want the request message %q", last.UpdateOf, posted[0].TS)
	}
	for _, b := range last.Blocks {
		if b.Type == "actions" {
			h.t.Errorf("the updated message still has buttons: %s", last.raw)
		}
	}
	for _, w := range want {
		if !strings.Contains(last.raw, w) {
			h.t.Errorf("the updated message lacks %q: %s", w, last.raw)
		}
	}
}

func runFlows(t *testing.T, newBackend func(t *testing.T) backend) {
	t.Run("Approve + this call for 8 h: the same call is allowed without asking, and the trail says slack and which grant", func(t *testing.T) {
		h := newHarness(t, newBackend(t))
		s := h.pendingStep("tsk_slack_grant")
		if a := h.click(blockActions("U0BOB", notify.ActionAllowCall, h.buttonValue(notify.ActionAllowCall))); a.status != 200 {
			t.Fatalf("teammate answer = %d", a.status)
		}
		if got := h.step(s.TaskID, s.ID); got.Status != step.Pending {
			t.Fatalf("a teammate's click decided: %s", got.Status)
		}
		if a := h.click(blockActions("U0ALICE", notify.ActionAllowCall, h.buttonValue(notify.ActionAllowCall))); a.status != 200 || a.body != "" {
			t.Fatalf("answer = %d %q", a.status, a.body)
		}
		if got := h.step(s.TaskID, s.ID); got.Status != step.Approved || got.DecidedVia != audit.ViaSlack {
			t.Fatalf("step = %s via %q, want approved via slack", got.Status, got.DecidedVia)
		}
		run := identity.Caller{Agent: "alice/writer", Owner: "alice", Kind: identity.KindRun, TaskID: s.TaskID, RunID: "run_1"}
		for i, id := range []string{"tu_1", "tu_2", "tu_3"} {
			out, err := h.svc.RequestStep(context.Background(), run, team.RequestStepInput{ToolName: "Bash", Input: json.RawMessage(`{"command":"git push origin main"}`), ToolUseID: id})
			if err != nil || out.Behavior != "allow" {
				t.Fatalf("push %d = %+v, %v; want allow", i, out, err)
			}
		}
		out, err := h.svc.RequestStep(context.Background(), run, team.RequestStepInput{ToolName: "Bash", Input: json.RawMessage(`{"command":"git push origin release"}`), ToolUseID: "tu_4"})
		if err != nil || out.Status != step.Pending {
			t.Fatalf("another call = %+v, %v; want asked", out, err)
		}
		entries, err := h.svc.ProjectAudit(context.Background(), "website-v2")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range entries {
			if (e.TaskID == s.TaskID && strings.HasPrefix(e.Action, "step_")) || strings.HasPrefix(e.Action, "grant_") {
				got = append(got, e.Action+" "+e.Via)
			}
		}
		joined := strings.Join(got, "\n")
		if !strings.Contains(joined, "step_approved slack") || !strings.Contains(joined, "grant_created slack") || strings.Count(joined, "step_allowed grant grt_") != 2 {
			t.Errorf("audit = %q; want the approval and the grant via slack, and two calls allowed by the grant", got)
		}
	})
	t.Run("the owner approves a step from the button; the message is updated in place", func(t *testing.T) {
		h := newHarness(t, newBackend(t))
		s := h.pendingStep("tsk_slack_approve")
		a := h.click(blockActions("U0ALICE", notify.ActionApprove, h.buttonValue(notify.ActionApprove)))
		if a.status != 200 || a.body != "" {
			t.Fatalf("answer = %d %q, want an empty 200", a.status, a.body)
		}
		got := h.step(s.TaskID, s.ID)
		if got.Status != step.Approved || got.DecidedBy != "alice" || got.DecidedAt == nil {
			t.Fatalf("step = %s by %q at %v, want approved by alice", got.Status, got.DecidedBy, got.DecidedAt)
		}
		if tk := h.task(s.TaskID); tk.State != task.Working || tk.WaitingOn != nil {
			t.Errorf("task = %s waiting on %v, want working (the run resumes)", tk.State, tk.WaitingOn)
		}
		h.settled("Approved by alice at "+got.DecidedAt.UTC().Format(time.RFC3339), "Bash")
		if e := h.ephemerals(); len(e) != 0 {
			t.Errorf("the owner got ephemeral answers: %v", e)
		}
	})

	t.Run("a teammate's click decides nothing and gets an ephemeral answer", func(t *testing.T) {
		h := newHarness(t, newBackend(t))
		s := h.pendingStep("tsk_slack_teammate")
		for _, action := range []string{notify.ActionApprove, notify.ActionRefuse} {
			a := h.click(blockActions("U0BOB", action, h.buttonValue(action)))
			if a.status != 200 {
				t.Fatalf("%s: answer = %d %q", action, a.status, a.body)
			}
		}
		if got := h.step(s.TaskID, s.ID); got.Status != step.Pending {
			t.Fatalf("a teammate's click decided the step: %s by %s", got.Status, got.DecidedBy)
		}
		e := h.ephemerals()
		if len(e) != 2 || !strings.Contains(e[0], "Only alice can decide this") || !strings.Contains(e[1], "Only alice can decide this") {
			t.Errorf("ephemeral answers = %q, want two saying only alice can decide this", e)
		}
		for _, m := range h.box.List() {
			if m.To != responseURL && strings.HasPrefix(m.Subject, "ephemeral") {
				t.Errorf("ephemeral answer sent to %s, not the payload's response_url", m.To)
			}
			if strings.HasPrefix(m.Subject, "modal") || strings.HasPrefix(m.Subject, "updated") {
				t.Errorf("a teammate's click opened a modal or changed the message: %+v", m)
			}
		}
		// Nor can alice's own name in the payload stand in for her user id.
		spoof := blockActions("U0MALLORY", notify.ActionApprove, h.buttonValue(notify.ActionApprove))
		spoof["user"].(map[string]any)["username"] = "alice"
		h.click(spoof)
		if got := h.step(s.TaskID, s.ID); got.Status != step.Pending {
			t.Fatal("a click by another user named alice decided the step")
		}
	})

	t.Run("refuse opens a modal; its submission refuses with the message", func(t *testing.T) {
		h := newHarness(t, newBackend(t))
		s := h.pendingStep("tsk_slack_refuse")
		token := h.buttonValue(notify.ActionRefuse)
		if a := h.click(blockActions("U0ALICE", notify.ActionRefuse, token)); a.status != 200 || a.body != "" {
			t.Fatalf("click = %d %q", a.status, a.body)
		}
		if got := h.step(s.TaskID, s.ID); got.Status != step.Pending {
			t.Fatalf("opening the modal decided: %s", got.Status)
		}
		view := h.modal()
		var v struct {
			CallbackID      string `json:"callback_id"`
			PrivateMetadata string `json:"private_metadata"`
		}
		_ = json.Unmarshal(view, &v)
		if v.CallbackID != slack.CallbackRefuse || v.PrivateMetadata != token {
			t.Fatalf("modal = %s", view)
		}
		if strings.Contains(string(view), `"mrkdwn"`) || !strings.Contains(string(view), "Refuse step "+s.ID+" of task "+s.TaskID+"?") {
			t.Errorf("the modal's text is not plain, naming the step: %s", view)
		}
		a := h.click(viewSubmission("U0ALICE", view, "  Not on a Friday: wait for Monday.  "))
		if a.status != 200 || a.body != "" {
			t.Fatalf("submission = %d %q, want an empty 200 (closes the modal)", a.status, a.body)
		}
		got := h.step(s.TaskID, s.ID)
		if got.Status != step.Refused || got.DecidedBy != "alice" || got.Message != "Not on a Friday: wait for Monday." {
			t.Fatalf("step = %s by %q message %q", got.Status, got.DecidedBy, got.Message)
		}
		h.settled("Refused by alice", "Not on a Friday: wait for Monday.")
	})

	t.Run("the modal refuses a teammate's submission and a too-long message", func(t *testing.T) {
		h := newHarness(t, newBackend(t))
		s := h.pendingStep("tsk_slack_modal_errors")
		h.click(blockActions("U0ALICE", notify.ActionRefuse, h.buttonValue(notify.ActionRefuse)))
		view := h.modal()
		for _, c := range []struct {
			user, message, want string
		}{
			{"U0BOB", "no", "Only alice can decide this"},
			{"U0ALICE", strings.Repeat("é", slack.MaxMessage+1), "longer than 2000 characters"},
		} {
			a := h.click(viewSubmission(c.user, view, c.message))
			var r struct {
				Action string            `json:"response_action"`
				Errors map[string]string `json:"errors"`
			}
			if err := json.Unmarshal([]byte(a.body), &r); err != nil || a.status != 200 || r.Action != "errors" || !strings.Contains(r.Errors[slack.MessageBlock], c.want) {
				t.Errorf("%s: answer = %d %s, want errors on %q saying %q", c.user, a.status, a.body, slack.MessageBlock, c.want)
			}
		}
		if got := h.step(s.TaskID, s.ID); got.Status != step.Pending {
			t.Fatalf("a refused submission decided: %s", got.Status)
		}
	})

	t.Run("a second click says who decided; the decision stands", func(t *testing.T) {
		h := newHarness(t, newBackend(t))
		s := h.pendingStep("tsk_slack_twice")
		token := h.buttonValue(notify.ActionApprove)
		h.click(blockActions("U0ALICE", notify.ActionApprove, token))
		h.clock = h.clock.Add(time.Second) // a new click: a new timestamp and signature
		h.click(viewSubmission("U0ALICE", mustJSON(map[string]any{"type": "modal", "callback_id": slack.CallbackRefuse, "private_metadata": token}), "changed my mind"))
		h.click(blockActions("U0ALICE", notify.ActionApprove, token))
		if got := h.step(s.TaskID, s.ID); got.Status != step.Approved {
			t.Fatalf("step = %s, want still approved", got.Status)
		}
		e := h.ephemerals()
		if len(e) != 1 || !strings.Contains(e[0], "already approved by alice") {
			t.Errorf("ephemeral answers = %q, want one saying it was already approved by alice", e)
		}
	})

	t.Run("a replayed request is refused and does nothing", func(t *testing.T) {
		h := newHarness(t, newBackend(t))
		s := h.pendingStep("tsk_slack_replay")
		body := formBody(blockActions("U0ALICE", notify.ActionRefuse, h.buttonValue(notify.ActionRefuse)))
		if a := h.post(body, h.clock, signed); a.status != 200 {
			t.Fatalf("first = %d %q", a.status, a.body)
		}
		h.clock = h.clock.Add(30 * time.Second) // still inside the window
		if a := h.post(body, h.clock.Add(-30*time.Second), signed); a.status != 401 {
			t.Errorf("replay = %d %q, want 401", a.status, a.body)
		}
		if n := len(h.modals()); n != 1 {
			t.Errorf("%d modals opened, want 1", n)
		}
		if got := h.step(s.TaskID, s.ID); got.Status != step.Pending {
			t.Errorf("step = %s", got.Status)
		}
	})

	t.Run("a forged or stale request gets 401 and decides nothing", func(t *testing.T) {
		h := newHarness(t, newBackend(t))
		s := h.pendingStep("tsk_slack_forged")
		body := formBody(blockActions("U0ALICE", notify.ActionApprove, h.buttonValue(notify.ActionApprove)))
		forged := func(ts string, b []byte) string { return slack.Sign([]byte("not-the-signing-secret"), ts, b) }
		for name, a := range map[string]answer{
			"forged":         h.post(body, h.clock, forged),
			"stale":          h.post(body, h.clock.Add(-6*time.Minute), signed),
			"no signature":   h.post(body, h.clock, func(string, []byte) string { return "" }),
			"body changed":   h.post(append(body, []byte("&x=1")...), h.clock, func(ts string, _ []byte) string { return signed(ts, body) }),
			"future":         h.post(body, h.clock.Add(6*time.Minute), signed),
			"signed old, ts": h.post(body, h.clock, func(string, []byte) string { return signed("1", body) }),
		} {
			if a.status != 401 {
				t.Errorf("%s: answer = %d %q, want 401", name, a.status, a.body)
			}
		}
		if got := h.step(s.TaskID, s.ID); got.Status != step.Pending {
			t.Fatalf("an unverified request decided the step: %s", got.Status)
		}
	})

	t.Run("a tampered or expired button decides nothing", func(t *testing.T) {
		h := newHarness(t, newBackend(t))
		s := h.pendingStep("tsk_slack_tampered")
		token := h.buttonValue(notify.ActionApprove)
		h.click(blockActions("U0ALICE", notify.ActionApprove, token+"x"))
		h.clock = s.ExpiresAt.Add(time.Minute)
		h.click(blockActions("U0ALICE", notify.ActionApprove, token))
		if got := h.step(s.TaskID, s.ID); got.Status != step.Pending {
			t.Fatalf("step = %s", got.Status)
		}
		e := h.ephemerals()
		if len(e) != 2 || !strings.Contains(e[0], "not valid") || !strings.Contains(e[1], "expired") {
			t.Errorf("ephemeral answers = %q", e)
		}
	})

	t.Run("results: approve completes the task, refuse sends it back with the message", func(t *testing.T) {
		h := newHarness(t, newBackend(t))
		h.resultAwaitingApproval("tsk_slack_result_ok")
		h.click(blockActions("U0ALICE", notify.ActionApprove, h.buttonValue(notify.ActionApprove)))
		if tk := h.task("tsk_slack_result_ok"); tk.State != task.Completed || tk.Result.Provenance != task.ProvenanceOwnerApproved {
			t.Fatalf("task = %s (%s), want completed, owner_approved", tk.State, tk.Result.Provenance)
		}
		h.settled("Approved by alice", "tsk_slack_result_ok is completed")

		h2 := newHarness(t, h.b)
		h2.resultAwaitingApproval("tsk_slack_result_no")
		h2.click(blockActions("U0ALICE", notify.ActionRefuse, h2.buttonValue(notify.ActionRefuse)))
		h2.click(viewSubmission("U0ALICE", h2.modal(), "The pricing table is wrong."))
		if tk := h2.task("tsk_slack_result_no"); tk.State != task.Working {
			t.Fatalf("task = %s, want working", tk.State)
		}
		h2.settled("Refused by alice", "back to working")
	})

	t.Run("Edit… opens the command in a modal; its submission approves the edited call once, and the message says so", func(t *testing.T) {
		h := newHarness(t, newBackend(t))
		s := h.pendingStep("tsk_slack_edit")
		token := h.buttonValue(notify.ActionEdit)
		h.click(blockActions("U0BOB", notify.ActionEdit, token))
		if n := len(h.modals()); n != 0 || len(h.ephemerals()) != 1 || !strings.Contains(h.ephemerals()[0], "Only alice can decide this") {
			t.Fatalf("a teammate's Edit click: %d modals, ephemerals %q", n, h.ephemerals())
		}
		if a := h.click(blockActions("U0ALICE", notify.ActionEdit, token)); a.status != 200 || a.body != "" {
			t.Fatalf("click = %d %q", a.status, a.body)
		}
		view := h.modal()
		var v struct {
			CallbackID      string `json:"callback_id"`
			PrivateMetadata string `json:"private_metadata"`
			Blocks          []struct {
				BlockID string `json:"block_id"`
				Element struct {
					InitialValue string `json:"initial_value"`
				} `json:"element"`
			} `json:"blocks"`
		}
		if err := json.Unmarshal(view, &v); err != nil || v.CallbackID != slack.CallbackEdit || v.PrivateMetadata != token ||
			v.Blocks[1].BlockID != slack.CommandBlock || v.Blocks[1].Element.InitialValue != "git push origin main" {
			t.Fatalf("edit modal = %s", view)
		}
		if strings.Contains(string(view), `"mrkdwn"`) {
			t.Errorf("the modal's text is not plain: %s", view)
		}
		if got := h.step(s.TaskID, s.ID); got.Status != step.Pending {
			t.Fatalf("opening the modal decided: %s", got.Status)
		}
		// bob's submission of alice's modal decides nothing.
		a := h.click(editSubmission("U0BOB", view, slack.CommandBlock, "git push origin feature/x", ""))
		if !strings.Contains(a.body, `"edit_command":"Only alice can decide this`) {
			t.Fatalf("teammate's submission = %d %s", a.status, a.body)
		}
		a = h.click(editSubmission("U0ALICE", view, slack.CommandBlock, "git push origin feature/x", "not main"))
		if a.status != 200 || a.body != "" {
			t.Fatalf("submission = %d %q, want an empty 200 (closes the modal)", a.status, a.body)
		}
		got := h.step(s.TaskID, s.ID)
		if got.Status != step.Approved || got.DecidedVia != audit.ViaSlack || string(got.Input) != `{"command":"git push origin main"}` ||
			string(got.Edited) != `{"command":"git push origin feature/x"}` || got.Message != "not main" {
			t.Fatalf("step = %s via %q, input %s, edited %s, message %q", got.Status, got.DecidedVia, got.Input, got.Edited, got.Message)
		}
		h.settled("Approved as edited by alice", "git push origin feature/x", "Input as asked")
		// The same submission again (a new signature): decided once.
		h.clock = h.clock.Add(time.Second)
		a = h.click(editSubmission("U0ALICE", view, slack.CommandBlock, "git push --force origin main", ""))
		if !strings.Contains(a.body, "already approved by alice") {
			t.Errorf("second submission = %d %s", a.status, a.body)
		}
		if got := h.step(s.TaskID, s.ID); string(got.Edited) != `{"command":"git push origin feature/x"}` {
			t.Errorf("a second submission changed the edit: %s", got.Edited)
		}
		// And the Edit button of the old message only says who decided.
		h.click(blockActions("U0ALICE", notify.ActionEdit, token))
		if e := h.ephemerals(); !strings.Contains(e[len(e)-1], "already approved by alice") || len(h.modals()) != 1 {
			t.Errorf("Edit after the decision: ephemerals %q, %d modals", e, len(h.modals()))
		}
		run := identity.Caller{Agent: "alice/writer", Owner: "alice", Kind: identity.KindRun, TaskID: s.TaskID, RunID: "run_1"}
		out, err := h.svc.RequestStep(context.Background(), run, team.RequestStepInput{ToolName: "Bash", Input: json.RawMessage(`{"command":"git push origin main"}`), ToolUseID: "tu_1"})
		if err != nil || out.Behavior != "allow" || string(out.UpdatedInput) != `{"command":"git push origin feature/x"}` {
			t.Fatalf("the run's call = %+v, %v; want allowed as edited", out, err)
		}
	})

	t.Run("the Edit modal refuses an edit out of bounds, not an object or empty; nothing is stored", func(t *testing.T) {
		h := newHarness(t, newBackend(t))
		s := h.pendingCall("tsk_slack_edit_bad", "mcp__github__merge", `{"pr":12,"method":"squash"}`)
		h.click(blockActions("U0ALICE", notify.ActionEdit, h.buttonValue(notify.ActionEdit)))
		view := h.modal()
		if !strings.Contains(string(view), `"block_id":"edit_input"`) || !strings.Contains(string(view), `"initial_value":"{\n  \"method\": \"squash\",\n  \"pr\": 12\n}"`) {
			t.Fatalf("a tool without a command line is edited as JSON: %s", view)
		}
		before, err := h.svc.ProjectAudit(context.Background(), "website-v2")
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct{ name, edit, want string }{
			{"an array", `[12]`, "must be a JSON object"},
			{"not JSON", `{"pr": twelve}`, "must be a JSON object"},
			{"empty", ``, "must be a JSON object"},
			{"too deep", `{"a":` + strings.Repeat("[", step.MaxInputDepth) + strings.Repeat("]", step.MaxInputDepth) + `}`, "nests deeper than 32 levels"},
			{"over the size (a forged payload: Slack's field holds 3000)", `{"pr":"` + strings.Repeat("x", step.MaxInputBytes) + `"}`, "limit of a step's input size is 65536 bytes"},
		} {
			h.clock = h.clock.Add(time.Second)
			a := h.click(editSubmission("U0ALICE", view, slack.InputBlock, c.edit, ""))
			var r struct {
				Action string            `json:"response_action"`
				Errors map[string]string `json:"errors"`
			}
			if err := json.Unmarshal([]byte(a.body), &r); err != nil || r.Action != "errors" || !strings.Contains(r.Errors[slack.InputBlock], c.want) {
				t.Errorf("%s: answer = %d %s, want errors on %s saying %q", c.name, a.status, a.body, slack.InputBlock, c.want)
			}
		}
		if got := h.step(s.TaskID, s.ID); got.Status != step.Pending || got.Edited != nil {
			t.Fatalf("a refused edit stored: %s %s", got.Status, got.Edited)
		}
		if after, _ := h.svc.ProjectAudit(context.Background(), "website-v2"); len(after) != len(before) {
			t.Errorf("%d audit entries written by refused edits", len(after)-len(before))
		}
		// An empty command line is refused too.
		h2 := newHarness(t, h.b)
		s2 := h2.pendingStep("tsk_slack_edit_empty")
		h2.click(blockActions("U0ALICE", notify.ActionEdit, h2.buttonValue(notify.ActionEdit)))
		a := h2.click(editSubmission("U0ALICE", h2.modal(), slack.CommandBlock, "   ", ""))
		if !strings.Contains(a.body, `"edit_command":"Nothing was decided: the edited command is empty.`) {
			t.Errorf("an empty command = %s", a.body)
		}
		if got := h2.step(s2.TaskID, s2.ID); got.Status != step.Pending {
			t.Errorf("an empty command decided: %s", got.Status)
		}
	})

	t.Run("a call longer than a Slack field is edited on the page", func(t *testing.T) {
		h := newHarness(t, newBackend(t))
		s := h.pendingStep2000("tsk_slack_edit_long")
		h.click(blockActions("U0ALICE", notify.ActionEdit, h.buttonValue(notify.ActionEdit)))
		if n := len(h.modals()); n != 0 {
			t.Errorf("%d modals opened for a call longer than a field", n)
		}
		if e := h.ephemerals(); len(e) != 1 || !strings.Contains(e[0], "edit it on the page") {
			t.Errorf("ephemerals = %q", e)
		}
		if got := h.step(s.TaskID, s.ID); got.Status != step.Pending {
			t.Errorf("step = %s", got.Status)
		}
	})

	t.Run("a decision made on the web page updates the Slack message too", func(t *testing.T) {
		h := newHarness(t, newBackend(t))
		s := h.pendingStep("tsk_slack_web")
		// What the approval page's POST does (shared/owners/web.decide).
		if _, err := h.svc.DecideStep(context.Background(), "alice", s.TaskID, s.ID, false, nil, "use the staging remote", "test"); err != nil {
			t.Fatal(err)
		}
		h.settled("Refused by alice", "use the staging remote")
		// The buttons of the old message now only say who decided.
		h.click(blockActions("U0ALICE", notify.ActionApprove, h.buttonValue(notify.ActionApprove)))
		if e := h.ephemerals(); len(e) != 1 || !strings.Contains(e[0], "already refused by alice") {
			t.Errorf("ephemeral answers = %q", e)
		}
	})

	t.Run("a model-spend cap reached: only its owner's Raise raises it, once, and the message says so", func(t *testing.T) {
		h := newHarness(t, newBackend(t))
		ctx := context.Background()
		s := h.pendingStep("tsk_slack_cap")
		if err := h.spend.SetCap(ctx, "alice", "website-v2", "alice/writer", 1_000_000, "test"); err != nil {
			t.Fatal(err)
		}
		run := identity.Caller{Agent: "alice/writer", Owner: "alice", Kind: identity.KindRun, TaskID: s.TaskID, RunID: "run_cap"}
		if _, err := h.spend.Record(ctx, run, modelspend.Report{CostUSD: 2}); err != nil {
			t.Fatal(err)
		}
		if m := h.messages("alice/writer reached 1 USD of model spend today"); len(m) != 1 {
			t.Fatalf("the ask in Slack: %+v", h.box.List())
		}
		raise := h.buttonValue(notify.ActionCapRaise)
		h.click(blockActions("U0BOB", notify.ActionCapRaise, raise))
		h.click(blockActions("U0ALICE", notify.ActionApprove, raise)) // a cap's token on another button
		if e := h.ephemerals(); len(e) != 2 || !strings.Contains(e[0], "Only alice can decide") || !strings.Contains(e[1], "decided nothing") {
			t.Fatalf("ephemeral answers = %q", e)
		}
		if a, _ := h.spend.Spend(ctx, "alice/writer"); !a.Status().Over || a.Today.Decision != "" {
			t.Fatalf("decided by the wrong click: %+v", a.Today)
		}
		h.click(blockActions("U0ALICE", notify.ActionCapRaise, raise))
		a, _ := h.spend.Spend(ctx, "alice/writer")
		if a.Status().Over || a.Today.RaisedTo != 3_000_000 || a.Today.DecidedBy != "alice" {
			t.Fatalf("after alice's Raise: %+v", a.Today)
		}
		if r := h.messages("response: "); len(r) != 1 || !strings.Contains(r[0].raw, `"replace_original":true`) || !strings.Contains(r[0].raw, "raised for "+a.Today.Day+" to 3 USD by alice") {
			t.Errorf("the message is not replaced by the outcome: %+v", r)
		}
		h.click(blockActions("U0ALICE", notify.ActionCapLeave, h.buttonValue(notify.ActionCapLeave)))
		if e := h.ephemerals(); len(e) != 3 || !strings.Contains(e[2], "already decided by alice") {
			t.Errorf("a second decision: %q", e)
		}
	})
}

// pendingStep2000 is a pending Bash step whose command is longer than a Slack field.
func (h *harness) pendingStep2000(taskID string) step.Step {
	h.t.Helper()
	return h.pendingCall(taskID, "Bash", `{"command":"echo `+strings.Repeat("x", slack.MaxEditField)+`"}`)
}

// modals returns the views the endpoint opened.
func (h *harness) modals() []json.RawMessage {
	var out []json.RawMessage
	for _, m := range h.box.List() {
		if m.Channel == outbox.ChannelSlack && strings.HasPrefix(m.Subject, "modal: ") {
			out = append(out, m.Body)
		}
	}
	return out
}

// modal is the one view opened so far.
func (h *harness) modal() json.RawMessage {
	h.t.Helper()
	m := h.modals()
	if len(m) != 1 {
		h.t.Fatalf("%d modals opened, want 1: %+v", len(m), h.box.List())
	}
	return m[0]
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
