package team_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/teamtest"
)

const (
	msgPending  = "still waiting for your owner: checkpoint, then end your turn; you'll be resumed when your owner decides"
	msgLeftToPL = "allowed, left for your permission layer: make exactly that call now"
)

// push is the call bob's run keeps asking about.
func push(input string) team.RequestStepInput {
	return team.RequestStepInput{ToolName: "Bash", Input: json.RawMessage(input), Kind: "outbound", Target: "origin", Reason: "publish"}
}

const pushInput = `{"command":"git push origin main","timeout":30}`

// stepRoom is a working task of bob's with a woken run (run_1) on it.
type stepRoom struct {
	*fixture
	task task.Task
	run  identity.Caller
}

func newStepRoom(t *testing.T) *stepRoom {
	f := newFixture(t)
	tk := f.working()
	return &stepRoom{fixture: f, task: tk, run: run(bob, tk.ID, "run_1", "")}
}

// ask calls request_step or fails the test.
func (r *stepRoom) ask(c identity.Caller, in team.RequestStepInput) team.RequestStepOutput {
	r.t.Helper()
	out, err := r.svc.RequestStep(ctx, c, in)
	if err != nil {
		r.t.Fatalf("request_step: %v", err)
	}
	return out
}

// decide is the owner's answer, or fails the test.
func (r *stepRoom) decide(stepID string, approve bool, message string) step.Step {
	r.t.Helper()
	st, err := r.svc.DecideStep(ctx, "bob", r.task.ID, stepID, approve, nil, message, "test")
	if err != nil {
		r.t.Fatalf("decide %s: %v", stepID, err)
	}
	return st
}

func (r *stepRoom) stored(stepID string) step.Step {
	r.t.Helper()
	st, err := r.store.Step(ctx, r.task.ID, stepID)
	if err != nil {
		r.t.Fatalf("read step %s: %v", stepID, err)
	}
	return st
}

func wantAnswer(t *testing.T, got team.RequestStepOutput, id string, status step.Status, behavior, message string) {
	t.Helper()
	if got.StepID != id || got.Status != status || got.Behavior != behavior || got.Message != message {
		t.Errorf("answer = %s %s %s %q\n want     %s %s %s %q", got.StepID, got.Status, got.Behavior, got.Message, id, status, behavior, message)
	}
}

func TestRequestStepNeedsAWokenRun(t *testing.T) {
	r := newStepRoom(t)
	_, err := r.svc.RequestStep(ctx, bob, push(pushInput))
	wantRefusal(t, err, "request_step is for a woken run only", "run token", "bob/reviewer called with its agent token")
	if steps, _ := r.store.StepsForTask(ctx, r.task.ID); len(steps) != 0 {
		t.Errorf("a refused request stored %d steps", len(steps))
	}
}

func TestRequestStepRefusals(t *testing.T) {
	cases := []struct {
		name   string
		caller func(r *stepRoom) identity.Caller
		prep   func(r *stepRoom)
		want   string
	}{
		{name: "a run of the requester", caller: func(r *stepRoom) identity.Caller { return run(alice, r.task.ID, "run_9", "") },
			want: "request_step on task tsk_1 is for its assignee (bob/reviewer); you are alice/writer"},
		{name: "a run token of a task outside the caller's projects", caller: func(r *stepRoom) identity.Caller {
			return run(carol, r.task.ID, "run_9", "")
		}, want: "no task tsk_1 in a project of carol/outsider"},
		{name: "a task under review", prep: func(r *stepRoom) { r.must(r.svc.ReturnResult(ctx, bob, codeResult(r.task.ID))) },
			want: "task tsk_1 is verifying; request_step needs accepted, working or waiting"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newStepRoom(t)
			caller := r.run
			if c.caller != nil {
				caller = c.caller(r)
			}
			if c.prep != nil {
				c.prep(r)
			}
			_, err := r.svc.RequestStep(ctx, caller, push(pushInput))
			wantRefusal(t, err, c.want)
		})
	}
}

func TestNewStepWaitsForTheOwner(t *testing.T) {
	r := newStepRoom(t)
	got := r.ask(r.run, push(pushInput))
	wantAnswer(t, got, "stp_1", step.Pending, "deny", msgPending)
	if got.UpdatedInput != nil {
		t.Errorf("a pending answer carries updatedInput %s", got.UpdatedInput)
	}
	tk := r.fixture.task(r.task.ID)
	if tk.State != task.Waiting || waitingOn(tk) != task.WaitingOnOwnerApproval {
		t.Errorf("task is %s waiting on %q, want waiting on owner_approval", tk.State, waitingOn(tk))
	}
	st := r.stored("stp_1")
	want := step.Step{ID: "stp_1", TaskID: tk.ID, Project: "website-v2", Agent: bob.Agent, RunID: "run_1", ToolName: "Bash",
		Kind: "outbound", Target: "origin", Reason: "publish", Status: step.Pending, CreatedAt: r.now, ExpiresAt: r.now.Add(time.Hour)}
	if st.ID != want.ID || st.TaskID != want.TaskID || st.Project != want.Project || st.Agent != want.Agent || st.RunID != want.RunID ||
		st.ToolName != want.ToolName || st.Kind != want.Kind || st.Target != want.Target || st.Reason != want.Reason ||
		st.Status != want.Status || !st.CreatedAt.Equal(want.CreatedAt) || !st.ExpiresAt.Equal(want.ExpiresAt) {
		t.Errorf("stored step = %+v\n want %+v (expiring at website-v2's 1h deadline)", st, want)
	}
	if string(st.Input) != pushInput {
		t.Errorf("stored input = %s, want the canonical %s", st.Input, pushInput)
	}
	h, _ := r.store.History(ctx, tk.ID)
	if last := h[len(h)-1]; last.Action != "step_requested" || last.By != bob.Agent || *last.From != task.Working || last.To != task.Waiting {
		t.Errorf("last history line = %+v, want bob's step_requested working→waiting", last)
	}
}

func TestPendingDeadlineDefaultsTo24Hours(t *testing.T) {
	f := newFixture(t)
	tk := f.handOff(bob, "mobile", carol.Agent, "code") // mobile sets no deadline
	f.must(f.svc.AcceptTask(ctx, carol, team.AcceptInput{TaskID: tk.ID}))
	out, err := f.svc.RequestStep(ctx, run(carol, tk.ID, "run_1", ""), push(pushInput))
	if err != nil {
		t.Fatal(err)
	}
	st, _ := f.store.Step(ctx, tk.ID, out.StepID)
	if want := f.now.Add(24 * time.Hour); !st.ExpiresAt.Equal(want) {
		t.Errorf("pending step expires at %v, want %v", st.ExpiresAt, want)
	}
}

func TestSameCallFindsTheSameStep(t *testing.T) {
	r := newStepRoom(t)
	first := r.ask(r.run, push(pushInput))
	version := r.fixture.task(r.task.ID).Version
	r.advance(time.Minute)
	again := r.ask(r.run, push("{ \"timeout\" : 30,\n \"command\": \"git push origin main\" }"))
	wantAnswer(t, again, first.StepID, step.Pending, "deny", msgPending)
	if steps, _ := r.store.StepsForTask(ctx, r.task.ID); len(steps) != 1 {
		t.Errorf("asking again stored %d steps, want 1", len(steps))
	}
	if v := r.fixture.task(r.task.ID).Version; v != version {
		t.Errorf("task version = %d, want %d: asking the same call again moves nothing", v, version)
	}
}

// A model words a call afresh each time it generates it: the resumed run's
// Bash call with another description is the approved step, used once, and
// the owner allowed what runs (the stored input comes back as updatedInput).
func TestARewordedCallIsTheApprovedStep(t *testing.T) {
	r := newStepRoom(t)
	asked := r.ask(r.run, push(`{"command":"git push origin main","description":"Publish the reviewed branch"}`))
	r.decide(asked.StepID, true, "")
	in := push(`{"description":"Push the branch to origin","command":"git push origin main"}`)
	in.ToolUseID = "toolu_02"
	got := r.ask(run(bob, r.task.ID, "run_2", "run_1"), in)
	wantAnswer(t, got, asked.StepID, step.Consumed, "allow", "allowed: make exactly that call, once, now")
	if string(got.UpdatedInput) != `{"command":"git push origin main","description":"Publish the reviewed branch"}` {
		t.Errorf("updatedInput %s, want the input the owner approved", got.UpdatedInput)
	}
	// What runs changed: another step, asked of the owner.
	forced := push(`{"command":"git push --force origin main","description":"Push the branch to origin"}`)
	if other := r.ask(run(bob, r.task.ID, "run_2", "run_1"), forced); other.StepID == asked.StepID || other.Status != step.Pending {
		t.Errorf("a changed command = %+v, want a new pending step", other)
	}
}

func TestDifferentInputWithdrawsThePendingStep(t *testing.T) {
	r := newStepRoom(t)
	first := r.ask(r.run, push(pushInput))
	second := r.ask(r.run, push(`{"command":"git push --force origin main","timeout":30}`))
	wantAnswer(t, second, "stp_2", step.Pending, "deny", msgPending)
	if st := r.stored(first.StepID); st.Status != step.Withdrawn {
		t.Errorf("first step is %s, want withdrawn", st.Status)
	}
	if st := r.stored("stp_2"); st.Status != step.Pending {
		t.Errorf("second step is %s, want pending", st.Status)
	}
	if _, err := r.svc.DecideStep(ctx, "bob", r.task.ID, first.StepID, true, nil, "", "test"); err == nil {
		t.Error("the owner could approve a withdrawn step")
	} else {
		wantRefusal(t, err, "step stp_1 was withdrawn: the run asked for another step instead")
	}
	// Asking the first call again is a new step, not the withdrawn one.
	third := r.ask(r.run, push(pushInput))
	if third.StepID != "stp_3" || third.Status != step.Pending {
		t.Errorf("asking the withdrawn call again = %+v, want a new pending stp_3", third)
	}
}

func TestApprovedStep(t *testing.T) {
	r := newStepRoom(t)
	asked := r.ask(r.run, push(pushInput))
	r.advance(2 * time.Minute)
	decided := r.decide(asked.StepID, true, "go ahead")
	if decided.Status != step.Approved || decided.DecidedBy != "bob" || !decided.ExpiresAt.Equal(r.now.Add(step.UseWindow)) {
		t.Errorf("decided step = %+v, want approved by bob, usable for 15 minutes", decided)
	}
	tk := r.fixture.task(r.task.ID)
	if tk.State != task.Working || tk.WaitingOn != nil {
		t.Errorf("after approval the task is %s waiting on %q, want working on nothing", tk.State, waitingOn(tk))
	}
	h, _ := r.store.History(ctx, tk.ID)
	if last := h[len(h)-1]; last.Action != "step_decided" || last.By != "owner:bob" || last.To != task.Working {
		t.Errorf("last history line = %+v, want owner:bob's step_decided → working", last)
	}

	// Without tool_use_id: left to the permission layer, still approved.
	got := r.ask(r.run, push(pushInput))
	wantAnswer(t, got, asked.StepID, step.Approved, "deny", msgLeftToPL)
	if st := r.stored(asked.StepID); st.Status != step.Approved {
		t.Fatalf("step is %s after a call without tool_use_id, want still approved", st.Status)
	}

	// With tool_use_id (keys in another order): allowed once, with the stored input.
	in := push(`{"timeout":30,"command":"git push origin main"}`)
	in.ToolUseID = "toolu_01"
	got = r.ask(r.run, in)
	wantAnswer(t, got, asked.StepID, step.Consumed, "allow", "allowed: make exactly that call, once, now")
	if string(got.UpdatedInput) != string(r.stored(asked.StepID).Input) || string(got.UpdatedInput) != pushInput {
		t.Errorf("updatedInput = %s, want the stored input %s", got.UpdatedInput, pushInput)
	}
	if st := r.stored(asked.StepID); st.Status != step.Consumed {
		t.Errorf("step is %s after use, want consumed", st.Status)
	}

	// Once used, the same call is a new step.
	again := r.ask(r.run, in)
	wantAnswer(t, again, "stp_2", step.Pending, "deny", msgPending)
}

func TestRefusedStepKeepsRefusing(t *testing.T) {
	r := newStepRoom(t)
	asked := r.ask(r.run, push(pushInput))
	r.decide(asked.StepID, false, "not on a Friday")
	if tk := r.fixture.task(r.task.ID); tk.State != task.Working {
		t.Errorf("after refusal the task is %s, want working", tk.State)
	}
	want := `refused by your owner: "not on a Friday"; don't try it again: finish without it, or return what you have and say why`
	for _, toolUseID := range []string{"", "toolu_01"} {
		in := push(pushInput)
		in.ToolUseID = toolUseID
		wantAnswer(t, r.ask(r.run, in), asked.StepID, step.Refused, "deny", want)
	}
	if st := r.stored(asked.StepID); st.Status != step.Refused {
		t.Errorf("step is %s, want refused", st.Status)
	}
}

func TestRefusalMessageFitsTheOutputSchema(t *testing.T) {
	r := newStepRoom(t)
	asked := r.ask(r.run, push(pushInput))
	r.decide(asked.StepID, false, strings.Repeat("no ", 400))
	got := r.ask(r.run, push(pushInput))
	if n := len([]rune(got.Message)); n > 500 || !strings.HasSuffix(got.Message, "…") {
		t.Errorf("refusal message has %d characters (ends %q), want at most 500, cut with …", n, got.Message[len(got.Message)-8:])
	}
}

func TestApprovedStepExpiresAfter15Minutes(t *testing.T) {
	cases := []struct {
		name    string
		wait    time.Duration
		expired bool
	}{
		{"used just in time", step.UseWindow - time.Millisecond, false},
		{"unused for 15 minutes", step.UseWindow, true},
		{"unused for an hour", time.Hour, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newStepRoom(t)
			asked := r.ask(r.run, push(pushInput))
			r.decide(asked.StepID, true, "")
			r.advance(c.wait)
			in := push(pushInput)
			in.ToolUseID = "toolu_01"
			got := r.ask(r.run, in)
			if !c.expired {
				wantAnswer(t, got, asked.StepID, step.Consumed, "allow", "allowed: make exactly that call, once, now")
				return
			}
			wantAnswer(t, got, "stp_2", step.Pending, "deny", msgPending)
			if st := r.stored(asked.StepID); st.Status != step.Expired {
				t.Errorf("old step is stored %s, want expired (checked on read)", st.Status)
			}
		})
	}
}

func TestPendingStepExpiresAtTheProjectDeadline(t *testing.T) {
	r := newStepRoom(t)
	asked := r.ask(r.run, push(pushInput))
	r.advance(time.Hour) // website-v2's deadline
	_, err := r.svc.DecideStep(ctx, "bob", r.task.ID, asked.StepID, true, nil, "", "test")
	wantRefusal(t, err, "step stp_1 expired at 2026-11-29T10:00:00Z; nothing was decided")
	got := r.ask(r.run, push(pushInput))
	wantAnswer(t, got, "stp_2", step.Pending, "deny", msgPending)
	if st := r.stored(asked.StepID); st.Status != step.Expired {
		t.Errorf("old step is stored %s, want expired", st.Status)
	}
}

func TestApprovedStepBelongsToItsRunAndTheRunThatResumesIt(t *testing.T) {
	cases := []struct {
		name   string
		caller func(r *stepRoom) identity.Caller
		allow  bool
	}{
		{"the run that asked", func(r *stepRoom) identity.Caller { return r.run }, true},
		{"the run that resumes it", func(r *stepRoom) identity.Caller { return run(bob, r.task.ID, "run_2", "run_1") }, true},
		{"an unrelated run", func(r *stepRoom) identity.Caller { return run(bob, r.task.ID, "run_3", "") }, false},
		{"a run resuming another run", func(r *stepRoom) identity.Caller { return run(bob, r.task.ID, "run_4", "run_2") }, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newStepRoom(t)
			asked := r.ask(r.run, push(pushInput))
			r.decide(asked.StepID, true, "")
			in := push(pushInput)
			in.ToolUseID = "toolu_01"
			got := r.ask(c.caller(r), in)
			if c.allow {
				wantAnswer(t, got, asked.StepID, step.Consumed, "allow", "allowed: make exactly that call, once, now")
				return
			}
			wantAnswer(t, got, "stp_2", step.Pending, "deny", msgPending)
			if st := r.stored(asked.StepID); st.Status != step.Approved {
				t.Errorf("the approved step is %s after another run's call, want still approved", st.Status)
			}
		})
	}
}

func TestDecideStepRefusals(t *testing.T) {
	r := newStepRoom(t)
	asked := r.ask(r.run, push(pushInput))
	_, err := r.svc.DecideStep(ctx, "alice", r.task.ID, asked.StepID, true, nil, "", "test")
	wantRefusal(t, err, "step stp_1 was asked by bob/reviewer, whose owner is bob, not alice")
	if st := r.stored(asked.StepID); st.Status != step.Pending {
		t.Fatalf("the wrong owner's decision stored %s", st.Status)
	}
	r.decide(asked.StepID, true, "")
	_, err = r.svc.DecideStep(ctx, "bob", r.task.ID, asked.StepID, false, nil, "changed my mind", "test")
	wantRefusal(t, err, "step stp_1 was already approved by bob at 2026-11-29T09:00:00Z")
	_, err = r.svc.DecideStep(ctx, "bob", r.task.ID, "stp_404", true, nil, "", "test")
	wantRefusal(t, err, "no step stp_404 on task tsk_1")
}

func TestCheckpointWhileAStepWaitsKeepsWaitingOnTheOwner(t *testing.T) {
	r := newStepRoom(t)
	asked := r.ask(r.run, push(pushInput))
	// The pending answer says: checkpoint, then end your turn.
	tk := r.must(r.svc.SaveCheckpoint(ctx, r.run, team.CheckpointInput{TaskID: r.task.ID, Progress: "asked to push"}))
	if tk.State != task.Waiting || waitingOn(tk) != task.WaitingOnOwnerApproval {
		t.Fatalf("after the checkpoint the task is %s waiting on %q, want still waiting on owner_approval", tk.State, waitingOn(tk))
	}
	r.decide(asked.StepID, true, "")
	if tk := r.fixture.task(r.task.ID); tk.State != task.Working || tk.WaitingOn != nil {
		t.Errorf("after the owner approved the task is %s waiting on %q, want working", tk.State, waitingOn(tk))
	}
}

// racingStore lands another write just before the next step write, as a
// racing request would; failing, it refuses every write that moves a task.
type racingStore struct {
	*teamtest.Store
	before  func()
	failing bool
	tries   int
}

func (s *racingStore) SaveSteps(c context.Context, change team.StepChange) error {
	if h := s.before; h != nil {
		s.before = nil
		h()
	}
	if s.failing && change.Move != nil {
		s.tries++
		return fmt.Errorf("save steps: %w", team.ErrConflict)
	}
	return s.Store.SaveSteps(c, change)
}

func (r *stepRoom) racing(before func()) (*team.Service, *racingStore) {
	rs := &racingStore{Store: r.store, before: before}
	svc := *r.svc
	svc.Store = rs
	return &svc, rs
}

func TestAStepThatLosesTheRaceToAskWaitsWithTheWinner(t *testing.T) {
	r := newStepRoom(t)
	var winner team.RequestStepOutput
	svc, _ := r.racing(func() { winner = r.ask(r.run, push(`{"command":"git push origin release"}`)) })
	out, err := svc.RequestStep(ctx, r.run, push(pushInput))
	if err != nil {
		t.Fatalf("the racer that lost got an error: %v", err)
	}
	wantAnswer(t, winner, "stp_2", step.Pending, "deny", msgPending)
	wantAnswer(t, out, "stp_1", step.Withdrawn, "deny", msgPending+" (your owner is asked about step stp_2, a Bash call asked at the same moment: one step waits at a time, so ask for this call again when you are resumed)")
	if st := r.stored("stp_1"); st.Status != step.Withdrawn {
		t.Errorf("the racer's step is %s, want withdrawn", st.Status)
	}
	if st := r.stored("stp_2"); st.Status != step.Pending {
		t.Errorf("the winner's step is %s, want still pending", st.Status)
	}
	// Once resumed, the run asks for the call again: a new step, asked of the owner.
	if again := r.ask(r.run, push(pushInput)); again.StepID != "stp_3" || again.Status != step.Pending {
		t.Errorf("asking again = %+v, want a new pending stp_3", again)
	}
}

func TestAnAskThatRacesTheOwnersDecisionAsksAgain(t *testing.T) {
	r := newStepRoom(t)
	first := r.ask(r.run, push(pushInput))
	svc, _ := r.racing(func() { r.decide(first.StepID, true, "") })
	out, err := svc.RequestStep(ctx, r.run, push(`{"command":"git push origin release"}`))
	if err != nil {
		t.Fatalf("an ask racing the owner's decision got an error: %v", err)
	}
	wantAnswer(t, out, "stp_2", step.Pending, "deny", msgPending)
	if st := r.stored(first.StepID); st.Status != step.Approved {
		t.Errorf("the decided step is %s, want approved (nothing withdrew it)", st.Status)
	}
}

func TestAskingGivesUpAfterBoundedRaces(t *testing.T) {
	r := newStepRoom(t)
	svc, rs := r.racing(nil)
	rs.failing = true
	_, err := svc.RequestStep(ctx, r.run, push(pushInput))
	wantRefusal(t, err, "changed while asking, 5 times; call request_step again")
	if rs.tries != 5 {
		t.Errorf("tried %d times, want 5", rs.tries)
	}
}

// TestRequestCheckedStepTakesTheInputAsChecked: a caller that checked the
// call's bounds (the MCP edge) hands over the canonical input, which is
// what the step stores, not checked again; a call whose input was not
// checked is not asked.
func TestRequestCheckedStepTakesTheInputAsChecked(t *testing.T) {
	r := newStepRoom(t)
	if _, err := r.svc.RequestCheckedStep(ctx, r.run, push(pushInput), nil); err == nil {
		t.Error("RequestCheckedStep asked with no checked input")
	}
	canonical, err := step.CheckInput(json.RawMessage(pushInput))
	if err != nil {
		t.Fatal(err)
	}
	// The input as sent is not an object: were it checked again, the call
	// would be refused.
	out, err := r.svc.RequestCheckedStep(ctx, r.run, push(`"not checked again"`), canonical)
	if err != nil {
		t.Fatalf("request_step: %v", err)
	}
	if got := string(r.stored(out.StepID).Input); got != string(canonical) {
		t.Errorf("stored input = %s, want the checked %s", got, canonical)
	}
}
