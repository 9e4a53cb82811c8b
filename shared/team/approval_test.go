package team_test

import (
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/team"
)

// inApproval brings a design task (website-v2 needs owner approval for
// design) from alice to bob through an accepted review, into approval.
func (f *fixture) inApproval() task.Task {
	f.t.Helper()
	tk := f.handOff(alice, "website-v2", bob.Agent, "design")
	f.must(f.svc.AcceptTask(ctx, bob, team.AcceptInput{TaskID: tk.ID}))
	f.must(f.svc.ReturnResult(ctx, bob, team.ReturnResultInput{TaskID: tk.ID, Summary: "Mockups.", Evidence: []task.Evidence{
		{Kind: "link", Summary: "Figma", URL: "https://example.com/figma"},
	}}))
	return f.must(f.svc.ReviewResult(ctx, alice, team.ReviewInput{TaskID: tk.ID, Verdict: "accept"}))
}

func TestOwnerApprovesTheResult(t *testing.T) {
	f := newFixture(t)
	tk := f.inApproval()
	if tk.State != task.Approval || tk.WaitingOn == nil || *tk.WaitingOn != task.WaitingOnOwnerApproval {
		t.Fatalf("task = %s waiting on %v, want approval waiting on owner_approval", tk.State, tk.WaitingOn)
	}
	if _, err := f.svc.DecideResult(ctx, "alice", tk.ID, task.ResultRound(tk), true, "", "test"); err == nil {
		t.Fatal("alice, who does not own the assignee, approved the result")
	}
	done, err := f.svc.DecideResult(ctx, "bob", tk.ID, task.ResultRound(tk), true, "Ship it.", "test")
	if err != nil {
		t.Fatalf("owner approval: %v", err)
	}
	if done.State != task.Completed || done.Result.Provenance != task.ProvenanceOwnerApproved {
		t.Errorf("task = %s with provenance %s, want completed and owner_approved", done.State, done.Result.Provenance)
	}
	_, err = f.svc.DecideResult(ctx, "bob", tk.ID, task.ResultRound(tk), false, "too late", "test")
	wantRefusal(t, err, "already decided by owner:bob", "completed")
}

func TestAResultLinkDecidesOnlyItsOwnRound(t *testing.T) {
	f := newFixture(t)
	tk := f.inApproval()
	first := task.ResultRound(tk)
	back, err := f.svc.DecideResult(ctx, "bob", tk.ID, first, false, "Use the brand colours.", "test")
	if err != nil || back.State != task.Working {
		t.Fatalf("refusal: task %s, err %v; want working", back.State, err)
	}
	f.advance(time.Minute)
	f.must(f.svc.ReturnResult(ctx, bob, team.ReturnResultInput{TaskID: tk.ID, Summary: "Recoloured.", Evidence: []task.Evidence{
		{Kind: "screenshot", Summary: "New mockups", URL: "https://example.com/mock.png"},
	}}))
	again := f.must(f.svc.ReviewResult(ctx, alice, team.ReviewInput{TaskID: tk.ID, Verdict: "accept"}))

	_, err = f.svc.DecideResult(ctx, "bob", tk.ID, first, true, "", "test")
	wantRefusal(t, err, "already decided by owner:bob")
	if got := f.task(tk.ID); got.State != task.Approval {
		t.Fatalf("the first round's link moved the second result to %s", got.State)
	}
	if _, err := f.svc.DecideResult(ctx, "bob", tk.ID, task.ResultRound(again), true, "", "test"); err != nil {
		t.Fatalf("the current round's link: %v", err)
	}
}
