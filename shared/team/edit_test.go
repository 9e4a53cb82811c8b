package team_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/domain/audit"
	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/team"
)

const (
	rmBuild = `{"command":"rm -rf build","description":"Clean the build"}`
	rmTmp   = `{"command":"rm -rf build/tmp","description":"Clean the build"}`
)

func rm(input, toolUseID string) team.RequestStepInput {
	return team.RequestStepInput{ToolName: "Bash", Input: json.RawMessage(input), ToolUseID: toolUseID}
}

// editRoom is bob's run asking rm -rf build, and bob approving rm -rf build/tmp instead.
func editRoom(t *testing.T, message string) (*stepRoom, team.RequestStepOutput) {
	r := newStepRoom(t)
	asked := r.ask(r.run, rm(rmBuild, ""))
	st, err := r.svc.DecideStep(ctx, "bob", r.task.ID, asked.StepID, true, json.RawMessage("{\n  \"description\": \"Clean the build\",\n  \"command\": \"rm -rf build/tmp\"\n}"), message, "test")
	if err != nil {
		t.Fatalf("decide with an edit: %v", err)
	}
	if st.Status != step.Approved || string(st.Edited) != rmTmp || string(st.Input) != rmBuild {
		t.Fatalf("decided = %s, input %s, edited %s; want approved, the call as asked and the canonical edit", st.Status, st.Input, st.Edited)
	}
	if h, _ := r.store.History(ctx, r.task.ID); h[len(h)-1].Note == nil || *h[len(h)-1].Note != "owner bob approved an edit of "+asked.StepID {
		t.Errorf("the task's history says %v, want the approval of an edit", h[len(h)-1].Note)
	}
	return r, asked
}

// The run asks again: the call as asked, or the edited call; with tool_use_id
// (behind a permission layer) or without. Each is allowed the edit, used once.
func TestAnEditedStepIsAllowedAsEdited(t *testing.T) {
	const this = "allowed as your owner edited it: your permission layer makes this call instead of the one you asked, once, now: Bash " + rmTmp
	for _, tc := range []struct {
		name      string
		caller    func(r *stepRoom) identity.Caller
		input     string
		toolUseID string
		status    step.Status
		behavior  string
		message   string
	}{
		{"the call as asked, behind a permission layer", func(r *stepRoom) identity.Caller { return r.run }, rmBuild, "toolu_1", step.Consumed, "allow", this},
		{"the call as asked, reworded, by the run that resumes it", func(r *stepRoom) identity.Caller { return run(bob, r.task.ID, "run_2", "run_1") },
			`{"description":"Remove the build","command":"rm -rf build"}`, "toolu_2", step.Consumed, "allow", this},
		{"the edited call itself", func(r *stepRoom) identity.Caller { return r.run }, `{"command":"rm -rf build/tmp"}`, "toolu_3", step.Consumed, "allow",
			"allowed as your owner edited it: make exactly that call, once, now"},
		{"the call as asked, no permission layer", func(r *stepRoom) identity.Caller { return r.run }, rmBuild, "", step.Approved, "deny",
			"allowed as your owner edited it, left for your permission layer: make this call (updatedInput) instead of the one you asked, now: Bash " + rmTmp},
		{"the edited call, no permission layer", func(r *stepRoom) identity.Caller { return r.run }, rmTmp, "", step.Approved, "deny",
			"allowed as your owner edited it, left for your permission layer: make exactly that call now"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, asked := editRoom(t, "")
			got := r.ask(tc.caller(r), rm(tc.input, tc.toolUseID))
			wantAnswer(t, got, asked.StepID, tc.status, tc.behavior, tc.message)
			if string(got.UpdatedInput) != rmTmp {
				t.Errorf("updatedInput = %s, want the edit %s", got.UpdatedInput, rmTmp)
			}
			if st := r.stored(asked.StepID); st.Status != tc.status {
				t.Errorf("step is stored %s, want %s", st.Status, tc.status)
			}
			if tc.status != step.Consumed {
				return
			}
			// Used once: neither call is allowed again.
			for _, again := range []string{rmBuild, rmTmp} {
				if out := r.ask(tc.caller(r), rm(again, "toolu_9")); out.StepID == asked.StepID || out.Status != step.Pending {
					t.Errorf("asking %s after the edit was used = %+v, want a new pending step", again, out)
				}
			}
		})
	}
}

func TestAnEditedStepBelongsToItsRun(t *testing.T) {
	r, asked := editRoom(t, "")
	got := r.ask(run(bob, r.task.ID, "run_3", ""), rm(rmTmp, "toolu_1"))
	if got.StepID == asked.StepID || got.Status != step.Pending {
		t.Errorf("an unrelated run's edited call = %+v, want a new pending step", got)
	}
	if st := r.stored(asked.StepID); st.Status != step.Approved {
		t.Errorf("the edited step is %s after another run's call, want still approved", st.Status)
	}
}

func TestAnEditedAnswerCarriesTheOwnersMessageWithinTheSchema(t *testing.T) {
	r, asked := editRoom(t, "only the temporary files")
	got := r.ask(r.run, rm(rmBuild, "toolu_1"))
	if !strings.HasSuffix(got.Message, `; your owner says: "only the temporary files"`) || !strings.Contains(got.Message, "rm -rf build/tmp") {
		t.Errorf("message = %q", got.Message)
	}
	// A long edit and a long message stay within the schema's 500 characters; the edit is whole in updatedInput.
	r2 := newStepRoom(t)
	asked = r2.ask(r2.run, rm(rmBuild, ""))
	long := `{"command":"rm -rf build/` + strings.Repeat("x", 2000) + `"}`
	if _, err := r2.svc.DecideStep(ctx, "bob", r2.task.ID, asked.StepID, true, json.RawMessage(long), strings.Repeat("why ", 400), "test"); err != nil {
		t.Fatal(err)
	}
	got = r2.ask(r2.run, rm(rmBuild, "toolu_1"))
	if n := len([]rune(got.Message)); n > 500 || string(got.UpdatedInput) != long {
		t.Errorf("message of %d characters, updatedInput of %d bytes; want at most 500, and the whole edit", n, len(got.UpdatedInput))
	}
}

// An edit that changes nothing of the call (the description reworded) is an
// approval as asked.
func TestAnEditThatChangesNothingApprovesAsAsked(t *testing.T) {
	r := newStepRoom(t)
	asked := r.ask(r.run, rm(rmBuild, ""))
	st, err := r.svc.DecideStep(ctx, "bob", r.task.ID, asked.StepID, true, json.RawMessage(`{"command":"rm -rf build","description":"Tidy"}`), "", "test")
	if err != nil || st.Status != step.Approved || st.Edited != nil {
		t.Fatalf("decided = %+v, %v; want approved with no edit", st, err)
	}
	wantAnswer(t, r.ask(r.run, rm(rmBuild, "toolu_1")), asked.StepID, step.Consumed, "allow", "allowed: make exactly that call, once, now")
}

// The audit trail shows the call as asked and the edit, where it was
// approved and where it was used.
func TestTheAuditShowsTheCallAndTheEdit(t *testing.T) {
	r, asked := editRoom(t, "")
	r.ask(r.run, rm(rmBuild, "toolu_1"))
	entries, _ := r.store.ProjectAudit(ctx, "website-v2")
	got := map[string]string{}
	for _, e := range entries {
		if e.StepID == asked.StepID {
			got[e.Action] = e.Detail
		}
	}
	for action, want := range map[string]string{
		audit.StepApproved: "Bash " + rmBuild + "; edited by the owner to: Bash " + rmTmp,
		audit.StepUsed:     "Bash " + rmBuild + "; used as the owner edited it: Bash " + rmTmp,
	} {
		if got[action] != want {
			t.Errorf("%s detail = %q\n want %q", action, got[action], want)
		}
	}
}

// Attacks on the edit: each is refused, and nothing is stored.
func TestDecideStepEditRefusals(t *testing.T) {
	for _, tc := range []struct {
		name    string
		owner   string
		approve bool
		edit    string
		prep    func(r *stepRoom, stepID string)
		want    string
	}{
		{name: "another owner's edit", owner: "alice", approve: true, edit: rmTmp,
			want: "step stp_1 was asked by bob/reviewer, whose owner is bob, not alice"},
		{name: "over the size", owner: "bob", approve: true, edit: `{"command":"` + strings.Repeat("x", step.MaxInputBytes) + `"}`,
			want: "the edited input is 65550 bytes as canonical JSON: the limit of a step's input size is 65536 bytes (64 KiB); nothing was decided"},
		{name: "too deep", owner: "bob", approve: true, edit: `{"a":` + strings.Repeat("[", step.MaxInputDepth) + strings.Repeat("]", step.MaxInputDepth) + `}`,
			want: "the edited input nests deeper than 32 levels"},
		{name: "too many elements", owner: "bob", approve: true, edit: `{"a":[` + strings.TrimSuffix(strings.Repeat("0,", step.MaxInputElements+1), ",") + `]}`,
			want: "the edited input holds more than 1000 keys and array elements"},
		{name: "an array", owner: "bob", approve: true, edit: `["rm -rf build/tmp"]`,
			want: "the edited input must be a JSON object, as the call's input is (step input is not a JSON object"},
		{name: "a string", owner: "bob", approve: true, edit: `"rm -rf build/tmp"`, want: "the edited input must be a JSON object"},
		{name: "not JSON", owner: "bob", approve: true, edit: `{"command": rm}`, want: "the edited input must be a JSON object"},
		{name: "an edit with a refusal", owner: "bob", approve: false, edit: rmTmp, want: "an edited call is approved, not refused"},
		{name: "replayed: the step was approved with an edit", owner: "bob", approve: true, edit: `{"command":"rm -rf /"}`,
			prep: func(r *stepRoom, id string) {
				if _, err := r.svc.DecideStep(ctx, "bob", r.task.ID, id, true, json.RawMessage(rmTmp), "", "test"); err != nil {
					r.t.Fatal(err)
				}
			}, want: "step stp_1 was already approved by bob"},
		{name: "an already refused step", owner: "bob", approve: true, edit: rmTmp,
			prep: func(r *stepRoom, id string) { r.decide(id, false, "no") }, want: "step stp_1 was already refused by bob"},
		{name: "an expired step", owner: "bob", approve: true, edit: rmTmp,
			prep: func(r *stepRoom, _ string) { r.advance(2 * time.Hour) }, want: "step stp_1 expired at"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newStepRoom(t)
			asked := r.ask(r.run, rm(rmBuild, ""))
			if tc.prep != nil {
				tc.prep(r, asked.StepID)
			}
			before := r.stored(asked.StepID)
			audits, _ := r.store.ProjectAudit(ctx, "website-v2")
			version := r.fixture.task(r.task.ID).Version
			_, err := r.svc.DecideStep(ctx, tc.owner, r.task.ID, asked.StepID, tc.approve, json.RawMessage(tc.edit), "", "test")
			wantRefusal(t, err, tc.want)
			after := r.stored(asked.StepID)
			if after.Status != before.Status || string(after.Edited) != string(before.Edited) || after.DecidedBy != before.DecidedBy {
				t.Errorf("step changed: %s %s → %s %s", before.Status, before.Edited, after.Status, after.Edited)
			}
			if now, _ := r.store.ProjectAudit(ctx, "website-v2"); len(now) != len(audits) {
				t.Errorf("%d audit entries written", len(now)-len(audits))
			}
			if v := r.fixture.task(r.task.ID).Version; v != version {
				t.Errorf("task moved: version %d → %d", version, v)
			}
			if tk := r.fixture.task(r.task.ID); tc.prep == nil && (tk.State != task.Waiting) {
				t.Errorf("task is %s, want still waiting on its owner", tk.State)
			}
		})
	}
}
