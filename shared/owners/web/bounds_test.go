package web_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/owners/notify"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/teamtest"
)

// TestApprovalPageOfTheLargestInputs: the approval page shows an input at
// request_step's bounds in full, and clips one stored before the bounds (a
// depth-1000 input of 2 KB made a 2 MB page, a depth-10,000 one 200 MB),
// saying so and how big the whole input is.
func TestApprovalPageOfTheLargestInputs(t *testing.T) {
	for _, tc := range []struct {
		name    string
		input   string
		clipped bool
	}{
		{"64 KiB at the bound", `{"command":"` + strings.Repeat("x", step.MaxInputBytes-16) + `"}`, false},
		{"1000 elements at the bound", `{"a":[` + strings.Repeat(`{},`, step.MaxInputElements-2) + `{}]}`, false},
		{"stored depth 1000", `{"a":` + strings.Repeat("[", 999) + strings.Repeat("]", 999) + `}`, false},
		{"stored depth 10000", `{"a":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}`, true},
	} {
		st := teamtest.New()
		st.AddProject(project)
		st.AddAgent(writer)
		st.AddAgent(review)
		e := newEnv(t, st)
		s := e.pendingStep("tsk_big")
		s.Input = json.RawMessage(tc.input)
		if err := st.SaveSteps(context.Background(), team.StepChange{Steps: []team.StepWrite{{Step: s, Prev: step.Pending}}, At: time.Now()}); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		page := e.get(e.stepLink(s))
		t.Logf("%s: %d bytes of input, a page of %d bytes in %v", tc.name, len(tc.input), len(page.raw), time.Since(start))
		if page.status != 200 || len(page.raw) > notify.InputPageMax+32<<10 {
			t.Errorf("%s: status %d, page of %d bytes", tc.name, page.status, len(page.raw))
		}
		if got := strings.Contains(page.body, "… clipped: the first"); got != tc.clipped {
			t.Errorf("%s: page says clipped %v, want %v", tc.name, got, tc.clipped)
		}
		if tc.clipped && !strings.Contains(page.body, "the whole input is 20004 bytes of JSON") {
			t.Errorf("%s: clipped page does not say how big the input is", tc.name)
		}
	}
}

// TestTaskPageClipsAStoredDeepInput: the task page renders its pending
// steps' inputs with the same clip as the approval page.
func TestTaskPageClipsAStoredDeepInput(t *testing.T) {
	e := newRoomEnv(t, newFakeRoom(t))
	tk := e.workingTask("tsk_deep", "alice/writer", "bob/reviewer")
	stepID := e.askStep(tk.ID, "alice/writer")
	ctx := context.Background()
	s, err := e.store.Step(ctx, tk.ID, stepID)
	if err != nil {
		t.Fatal(err)
	}
	s.Input = json.RawMessage(`{"a":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}`)
	if err := e.store.SaveSteps(ctx, team.StepChange{Steps: []team.StepWrite{{Step: s, Prev: step.Pending}}, At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	page := e.signIn("alice").get("/t/tsk_deep")
	t.Logf("task page with a stored depth-10000 input: %d bytes", len(page.raw))
	if page.status != 200 || len(page.raw) > notify.InputPageMax+32<<10 || !strings.Contains(page.text, "the whole input is 20004 bytes of JSON") {
		t.Errorf("task page: status %d, %d bytes, clip note %v", page.status, len(page.raw), strings.Contains(page.text, "clipped"))
	}
}
