package team_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/teamtest"
)

func TestFullLifecycleByTwoAgents(t *testing.T) {
	f := newFixture(t)
	tk := f.handOff(alice, "website-v2", bob.Agent, "code")
	if tk.ID != "tsk_1" || tk.State != task.Routed || tk.Requester != alice.Agent || tk.Assignee != bob.Agent {
		t.Fatalf("handed off %+v, want tsk_1 routed from alice to bob", tk)
	}
	if tk.Packet.Files == nil || tk.Packet.DependsOn == nil {
		t.Errorf("optional packet lists are null, the schema wants []: %+v", tk.Packet)
	}
	id := tk.ID
	steps := []struct {
		name   string
		do     func() (team.TaskOutput, error)
		state  task.State
		wait   string
		action string
		by     string
	}{
		{"bob accepts", func() (team.TaskOutput, error) {
			return f.svc.AcceptTask(ctx, bob, team.AcceptInput{TaskID: id, Note: "on it"})
		}, task.Accepted, "", "accept", bob.Agent},
		{"bob checkpoints", func() (team.TaskOutput, error) {
			return f.svc.SaveCheckpoint(ctx, bob, team.CheckpointInput{TaskID: id, Progress: "found the bug", Decisions: []string{"patch, not rewrite"}})
		}, task.Working, "", "checkpoint", bob.Agent},
		{"bob waits on a human", func() (team.TaskOutput, error) {
			return f.svc.SaveCheckpoint(ctx, bob, team.CheckpointInput{TaskID: id, Progress: "need a staging login", WaitingOn: task.WaitingOnHuman})
		}, task.Waiting, task.WaitingOnHuman, "checkpoint", bob.Agent},
		{"bob returns a result", func() (team.TaskOutput, error) { return f.svc.ReturnResult(ctx, bob, codeResult(id)) },
			task.Verifying, "", "return_result", bob.Agent},
		{"alice asks for rework", func() (team.TaskOutput, error) {
			return f.svc.ReviewResult(ctx, alice, team.ReviewInput{TaskID: id, Verdict: "rework", Feedback: "add a regression test"})
		}, task.Working, "", "review_rework", alice.Agent},
		{"bob returns again", func() (team.TaskOutput, error) { return f.svc.ReturnResult(ctx, bob, codeResult(id)) },
			task.Verifying, "", "return_result", bob.Agent},
		{"alice accepts", func() (team.TaskOutput, error) {
			return f.svc.ReviewResult(ctx, alice, team.ReviewInput{TaskID: id, Verdict: "accept"})
		}, task.Completed, "", "review_accept", alice.Agent},
	}
	for i, s := range steps {
		f.advance(time.Minute)
		got := f.must(s.do())
		if got.State != s.state || waitingOn(got) != s.wait {
			t.Fatalf("%s: task is %s waiting on %q, want %s waiting on %q", s.name, got.State, waitingOn(got), s.state, s.wait)
		}
		if !got.UpdatedAt.Equal(f.now) {
			t.Errorf("%s: updated_at = %v, want the clock %v", s.name, got.UpdatedAt, f.now)
		}
		if stored := f.task(id); stored.State != s.state || stored.Version != i+2 {
			t.Errorf("%s: stored task is %s at version %d, want %s at %d", s.name, stored.State, stored.Version, s.state, i+2)
		}
	}
	final := f.task(id)
	if final.Result == nil || final.Result.ReturnedBy != bob.Agent || final.Result.Provenance != task.ProvenanceAgentGenerated {
		t.Errorf("result = %+v, want bob's, provenance defaulted to agent_generated", final.Result)
	}
	if final.LatestCheckpoint == nil || final.LatestCheckpoint.Progress != "need a staging login" {
		t.Errorf("latest checkpoint = %+v, want the last one saved", final.LatestCheckpoint)
	}

	for _, reader := range []identity.Caller{alice, bob, dave} {
		got, err := f.svc.GetTask(ctx, reader, team.GetTaskInput{TaskID: id})
		if err != nil {
			t.Fatalf("get_task by %s: %v", reader.Agent, err)
		}
		if len(got.History) != len(steps)+1 {
			t.Fatalf("history has %d lines, want %d", len(got.History), len(steps)+1)
		}
		first := got.History[0]
		if first.Action != "hand_off" || first.From != nil || first.To != task.Routed || first.By != alice.Agent {
			t.Errorf("first history line = %+v, want alice's hand_off to routed from nothing", first)
		}
		prev := task.Routed
		for i, s := range steps {
			e := got.History[i+1]
			if e.Action != s.action || e.By != s.by || e.From == nil || *e.From != prev || e.To != s.state {
				t.Errorf("history[%d] = %s by %s %v→%s, want %s by %s %s→%s", i+1, e.Action, e.By, e.From, e.To, s.action, s.by, prev, s.state)
			}
			prev = s.state
		}
		if n := got.History[5].Note; n == nil || *n != "add a regression test" {
			t.Errorf("rework line note = %v, want the review feedback", n)
		}
	}
}

func TestReviewAcceptNeedingOwnerApproval(t *testing.T) {
	f := newFixture(t)
	tk := f.handOff(alice, "website-v2", bob.Agent, "design")
	dependent := f.handOff(alice, "website-v2", dave.Agent, "answer", tk.ID)
	f.must(f.svc.AcceptTask(ctx, bob, team.AcceptInput{TaskID: tk.ID}))
	f.must(f.svc.ReturnResult(ctx, bob, team.ReturnResultInput{TaskID: tk.ID, Summary: "mockups", Evidence: []task.Evidence{
		{Kind: "screenshot", Summary: "hero", URL: "https://example.com/hero.png"},
	}}))
	got := f.must(f.svc.ReviewResult(ctx, alice, team.ReviewInput{TaskID: tk.ID, Verdict: "accept"}))
	if got.State != task.Approval || waitingOn(got) != task.WaitingOnOwnerApproval {
		t.Errorf("task is %s waiting on %q, want approval waiting on owner_approval (website-v2 wants owner approval of design)", got.State, waitingOn(got))
	}
	if d := f.task(dependent.ID); d.State != task.Requested {
		t.Errorf("dependent is %s: a task in approval is not completed, so it must stay requested", d.State)
	}
}

func TestRefusedMovesWriteNothing(t *testing.T) {
	cases := []struct {
		name  string
		setup func(f *fixture) string
		call  func(f *fixture, id string) (team.TaskOutput, error)
		want  []string
	}{
		{name: "requester cannot accept",
			setup: func(f *fixture) string { return f.handOff(alice, "website-v2", bob.Agent, "code").ID },
			call: func(f *fixture, id string) (team.TaskOutput, error) {
				return f.svc.AcceptTask(ctx, alice, team.AcceptInput{TaskID: id})
			},
			want: []string{"accept_task on task tsk_1 is for its assignee (bob/reviewer); you are alice/writer"}},
		{name: "assignee cannot review",
			setup: func(f *fixture) string {
				id := f.working().ID
				f.must(f.svc.ReturnResult(ctx, bob, codeResult(id)))
				return id
			},
			call: func(f *fixture, id string) (team.TaskOutput, error) {
				return f.svc.ReviewResult(ctx, bob, team.ReviewInput{TaskID: id, Verdict: "accept"})
			},
			want: []string{"review_result on task tsk_1 is for its requester (alice/writer); you are bob/reviewer"}},
		{name: "return_result on a completed task",
			setup: func(f *fixture) string {
				id := f.working().ID
				f.must(f.svc.ReturnResult(ctx, bob, codeResult(id)))
				f.must(f.svc.ReviewResult(ctx, alice, team.ReviewInput{TaskID: id, Verdict: "accept"}))
				return id
			},
			call: func(f *fixture, id string) (team.TaskOutput, error) {
				return f.svc.ReturnResult(ctx, bob, codeResult(id))
			},
			want: []string{"task tsk_1 is completed; return_result needs accepted, working or waiting"}},
		{name: "notes alone for code",
			setup: func(f *fixture) string { return f.working().ID },
			call: func(f *fixture, id string) (team.TaskOutput, error) {
				return f.svc.ReturnResult(ctx, bob, team.ReturnResultInput{TaskID: id, Summary: "done", Evidence: []task.Evidence{{Kind: "note", Summary: "trust me"}}})
			},
			want: []string{"a code result needs evidence of kind test_output, commit or pull_request; got note"}},
		{name: "owner_approved provenance from an agent",
			setup: func(f *fixture) string { return f.working().ID },
			call: func(f *fixture, id string) (team.TaskOutput, error) {
				in := codeResult(id)
				in.Provenance = task.ProvenanceOwnerApproved
				return f.svc.ReturnResult(ctx, bob, in)
			},
			want: []string{"provenance owner_approved is set only when a human owner approves"}},
		{name: "rework without feedback",
			setup: func(f *fixture) string {
				id := f.working().ID
				f.must(f.svc.ReturnResult(ctx, bob, codeResult(id)))
				return id
			},
			call: func(f *fixture, id string) (team.TaskOutput, error) {
				return f.svc.ReviewResult(ctx, alice, team.ReviewInput{TaskID: id, Verdict: "rework"})
			},
			want: []string{"review_result with verdict rework needs feedback"}},
		{name: "accept twice",
			setup: func(f *fixture) string {
				id := f.handOff(alice, "website-v2", bob.Agent, "code").ID
				f.must(f.svc.AcceptTask(ctx, bob, team.AcceptInput{TaskID: id}))
				return id
			},
			call: func(f *fixture, id string) (team.TaskOutput, error) {
				return f.svc.AcceptTask(ctx, bob, team.AcceptInput{TaskID: id})
			},
			want: []string{"task tsk_1 is accepted; accept_task needs routed"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			id := c.setup(f)
			before := f.task(id)
			hist, _ := f.store.History(ctx, id)
			f.advance(time.Minute)
			_, err := c.call(f, id)
			wantRefusal(t, err, c.want...)
			after := f.task(id)
			hist2, _ := f.store.History(ctx, id)
			if after.Version != before.Version || after.State != before.State || len(hist2) != len(hist) {
				t.Errorf("a refused call wrote: version %d→%d, state %s→%s, history %d→%d lines",
					before.Version, after.Version, before.State, after.State, len(hist), len(hist2))
			}
		})
	}
}

func TestDeclineAndCancel(t *testing.T) {
	type prep func(f *fixture) string
	routed := func(f *fixture) string { return f.handOff(alice, "website-v2", bob.Agent, "code").ID }
	accepted := func(f *fixture) string {
		id := routed(f)
		f.must(f.svc.AcceptTask(ctx, bob, team.AcceptInput{TaskID: id}))
		return id
	}
	working := func(f *fixture) string { return f.working().ID }
	verifying := func(f *fixture) string {
		id := working(f)
		f.must(f.svc.ReturnResult(ctx, bob, codeResult(id)))
		return id
	}
	requested := func(f *fixture) string {
		dep := routed(f)
		return f.handOff(alice, "website-v2", bob.Agent, "code", dep).ID
	}
	cancelled := func(f *fixture) string {
		id := routed(f)
		f.must(f.svc.CancelTask(ctx, alice, team.CancelInput{TaskID: id, Reason: "not needed"}))
		return id
	}
	decline := func(f *fixture, c identity.Caller, id string) (team.TaskOutput, error) {
		return f.svc.DeclineTask(ctx, c, team.DeclineInput{TaskID: id, Reason: "out of scope"})
	}
	cancel := func(f *fixture, c identity.Caller, id string) (team.TaskOutput, error) {
		return f.svc.CancelTask(ctx, c, team.CancelInput{TaskID: id, Reason: "launch moved"})
	}
	cases := []struct {
		name    string
		prep    prep
		call    func(*fixture, identity.Caller, string) (team.TaskOutput, error)
		by      identity.Caller
		to      task.State
		refusal string
	}{
		{name: "assignee declines a routed task", prep: routed, call: decline, by: bob, to: task.Rejected},
		{name: "assignee declines an accepted task", prep: accepted, call: decline, by: bob, to: task.Rejected},
		{name: "decline once working is refused", prep: working, call: decline, by: bob, refusal: "task tsk_1 is working; decline_task needs routed or accepted"},
		{name: "requester cannot decline", prep: routed, call: decline, by: alice, refusal: "decline_task on task tsk_1 is for its assignee (bob/reviewer); you are alice/writer"},
		{name: "requester cancels a requested task", prep: requested, call: cancel, by: alice, to: task.Cancelled},
		{name: "requester cancels a routed task", prep: routed, call: cancel, by: alice, to: task.Cancelled},
		{name: "requester cancels a working task", prep: working, call: cancel, by: alice, to: task.Cancelled},
		{name: "requester cancels a task under review", prep: verifying, call: cancel, by: alice, to: task.Cancelled},
		{name: "assignee cannot cancel", prep: working, call: cancel, by: bob, refusal: "cancel_task on task tsk_1 is for its requester (alice/writer); you are bob/reviewer"},
		{name: "cancel twice is refused", prep: cancelled, call: cancel, by: alice, refusal: "task tsk_1 is cancelled; cancel_task needs an open state"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			id := c.prep(f)
			got, err := c.call(f, c.by, id)
			if c.refusal != "" {
				wantRefusal(t, err, c.refusal)
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if got.Task.State != c.to || f.task(id).State != c.to {
				t.Errorf("task is %s (stored %s), want %s", got.Task.State, f.task(id).State, c.to)
			}
			h, _ := f.store.History(ctx, id)
			if last := h[len(h)-1]; last.Note == nil || (*last.Note != "out of scope" && *last.Note != "launch moved") {
				t.Errorf("last history line %+v does not keep the reason", last)
			}
		})
	}
}

// racing is a store where another call lands just before the next task write.
type racing struct {
	*teamtest.Store
	before func()
}

func (r *racing) ApplyMove(c context.Context, prev int, m task.Move) error {
	if f := r.before; f != nil {
		r.before = nil
		f()
	}
	return r.Store.ApplyMove(c, prev, m)
}

func TestLostRaceIsRefusedWithTheWinningState(t *testing.T) {
	f := newFixture(t)
	id := f.handOff(alice, "website-v2", bob.Agent, "code").ID
	other := &team.Service{Store: f.store, Now: f.svc.Now, NewID: f.svc.NewID}
	r := &racing{Store: f.store, before: func() {
		if _, err := other.CancelTask(ctx, alice, team.CancelInput{TaskID: id, Reason: "changed my mind"}); err != nil {
			t.Fatalf("racing cancel: %v", err)
		}
	}}
	f.svc.Store = r
	_, err := f.svc.AcceptTask(ctx, bob, team.AcceptInput{TaskID: id})
	wantRefusal(t, err, "task tsk_1 was changed by another call at the same moment and is now cancelled")
	h, _ := f.store.History(ctx, id)
	var actions []string
	for _, e := range h {
		actions = append(actions, e.Action)
	}
	if !slices.Equal(actions, []string{"hand_off", "cancel"}) {
		t.Errorf("history = %v, want hand_off, cancel: the losing accept wrote nothing", actions)
	}
}
