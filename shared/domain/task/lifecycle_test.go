package task_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/domain/task"
)

const (
	requester = "alice/writer"
	assignee  = "bob/reviewer"
	stranger  = "carol/outsider"
)

var (
	created = time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	now     = created.Add(time.Hour)
)

// inState is a task of deliverable type code, as stored, in the given state.
func inState(s task.State) task.Task {
	t := task.Task{
		ID: "tsk_1", Project: "website-v2", State: s,
		Requester: requester, Assignee: assignee,
		Packet:    task.Packet{Task: "Fix the footer", DeliverableType: "code", AcceptanceCriteria: []string{"tests pass"}, Files: []string{}, DependsOn: []string{}},
		CreatedAt: created, UpdatedAt: created, Version: 3,
	}
	if s == task.Waiting {
		w := task.WaitingOnHuman
		t.WaitingOn = &w
	}
	if s == task.Approval {
		w := task.WaitingOnOwnerApproval
		t.WaitingOn = &w
	}
	return t
}

func goodResult() task.Result {
	return task.Result{
		Summary:    "Fixed the footer.",
		Evidence:   []task.Evidence{{Kind: "test_output", Summary: "go test ok", Content: "ok ./..."}},
		Provenance: task.ProvenanceAgentGenerated,
	}
}

// transition is one lifecycle rule applied by a caller.
type transition struct {
	name    string
	tool    string // as named in refusals
	allowed []task.State
	needs   string // how the refusal names the allowed states
	to      task.State
	wait    *string // expected waiting_on after the move
	action  string
	apply   func(t task.Task, caller string) (task.Move, error)
	caller  string // who may
}

func ptr(s string) *string { return &s }

func transitions() []transition {
	return []transition{
		{name: "accept", tool: "accept_task", allowed: []task.State{task.Routed}, needs: "routed", to: task.Accepted, action: "accept", caller: assignee,
			apply: func(t task.Task, c string) (task.Move, error) { return task.Accept(t, c, "on it", now) }},
		{name: "decline", tool: "decline_task", allowed: []task.State{task.Routed, task.Accepted}, needs: "routed or accepted", to: task.Rejected, action: "decline", caller: assignee,
			apply: func(t task.Task, c string) (task.Move, error) { return task.Decline(t, c, "out of scope", now) }},
		{name: "checkpoint", tool: "save_checkpoint", allowed: []task.State{task.Accepted, task.Working, task.Waiting}, needs: "accepted, working or waiting", to: task.Working, action: "checkpoint", caller: assignee,
			apply: func(t task.Task, c string) (task.Move, error) {
				return task.SaveCheckpoint(t, c, task.Checkpoint{Progress: "half done"}, "", now)
			}},
		{name: "checkpoint waiting on agent", tool: "save_checkpoint", allowed: []task.State{task.Accepted, task.Working, task.Waiting}, needs: "accepted, working or waiting", to: task.Waiting, wait: ptr(task.WaitingOnAgent), action: "checkpoint", caller: assignee,
			apply: func(t task.Task, c string) (task.Move, error) {
				return task.SaveCheckpoint(t, c, task.Checkpoint{Progress: "blocked"}, task.WaitingOnAgent, now)
			}},
		{name: "ask the owner", tool: "request_step", allowed: []task.State{task.Accepted, task.Working, task.Waiting}, needs: "accepted, working or waiting", to: task.Waiting, wait: ptr(task.WaitingOnOwnerApproval), action: "step_requested", caller: assignee,
			apply: func(t task.Task, c string) (task.Move, error) { return task.AskOwner(t, c, "git_push", "stp_1", now) }},
		{name: "return result", tool: "return_result", allowed: []task.State{task.Accepted, task.Working, task.Waiting}, needs: "accepted, working or waiting", to: task.Verifying, action: "return_result", caller: assignee,
			apply: func(t task.Task, c string) (task.Move, error) { return task.ReturnResult(t, c, goodResult(), now) }},
		{name: "review accept", tool: "review_result", allowed: []task.State{task.Verifying}, needs: "verifying", to: task.Completed, action: "review_accept", caller: requester,
			apply: func(t task.Task, c string) (task.Move, error) {
				return task.Review(t, c, task.VerdictAccept, "", false, now)
			}},
		{name: "review accept needing owner approval", tool: "review_result", allowed: []task.State{task.Verifying}, needs: "verifying", to: task.Approval, wait: ptr(task.WaitingOnOwnerApproval), action: "review_accept", caller: requester,
			apply: func(t task.Task, c string) (task.Move, error) {
				return task.Review(t, c, task.VerdictAccept, "", true, now)
			}},
		{name: "review rework", tool: "review_result", allowed: []task.State{task.Verifying}, needs: "verifying", to: task.Working, action: "review_rework", caller: requester,
			apply: func(t task.Task, c string) (task.Move, error) {
				return task.Review(t, c, task.VerdictRework, "add a test", false, now)
			}},
		{name: "review reject", tool: "review_result", allowed: []task.State{task.Verifying}, needs: "verifying", to: task.Rejected, action: "review_reject", caller: requester,
			apply: func(t task.Task, c string) (task.Move, error) {
				return task.Review(t, c, task.VerdictReject, "wrong repo", true, now)
			}},
	}
}

func TestTransitionsFromEveryState(t *testing.T) {
	for _, tr := range transitions() {
		for _, from := range task.States {
			allowed := slices.Contains(tr.allowed, from)
			name := tr.name + "/from " + string(from)
			t.Run(name, func(t *testing.T) {
				before := inState(from)
				m, err := tr.apply(before, tr.caller)
				if !allowed {
					want := "task tsk_1 is " + string(from) + "; " + tr.tool + " needs " + tr.needs
					assertRefusal(t, err, want)
					return
				}
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if m.Task.State != tr.to {
					t.Errorf("state = %s, want %s", m.Task.State, tr.to)
				}
				if !equalPtr(m.Task.WaitingOn, tr.wait) {
					t.Errorf("waiting_on = %v, want %v", deref(m.Task.WaitingOn), deref(tr.wait))
				}
				if !m.Task.UpdatedAt.Equal(now) || !m.Task.CreatedAt.Equal(created) {
					t.Errorf("times = created %v updated %v, want created %v updated %v", m.Task.CreatedAt, m.Task.UpdatedAt, created, now)
				}
				if m.Task.Version != before.Version {
					t.Errorf("version = %d: the store, not the rule, bumps it", m.Task.Version)
				}
				e := m.Event
				if e.By != tr.caller || e.Action != tr.action || e.To != tr.to || e.From == nil || *e.From != from || !e.At.Equal(now) {
					t.Errorf("event = %+v (from %v), want by %s action %s %s → %s at %v", e, deref((*string)(e.From)), tr.caller, tr.action, from, tr.to, now)
				}
				if before.State != from {
					t.Errorf("the rule changed its input task: state %s", before.State)
				}
			})
		}
	}
}

func TestTransitionsRefuseTheWrongCaller(t *testing.T) {
	for _, tr := range transitions() {
		role, holder := "assignee", assignee
		if tr.caller == requester {
			role, holder = "requester", requester
		}
		others := []string{stranger, requester}
		if tr.caller == requester {
			others = []string{stranger, assignee}
		}
		for _, other := range others {
			t.Run(tr.name+"/by "+other, func(t *testing.T) {
				// In an allowed state, so only the caller is wrong.
				_, err := tr.apply(inState(tr.allowed[0]), other)
				assertRefusal(t, err, tr.tool+" on task tsk_1 is for its "+role+" ("+holder+"); you are "+other+", and the task is "+string(tr.allowed[0]))
			})
		}
	}
}

func TestCancel(t *testing.T) {
	for _, from := range task.States {
		t.Run("from "+string(from), func(t *testing.T) {
			m, err := task.Cancel(inState(from), requester, "launch moved", now)
			if !from.Open() {
				assertRefusal(t, err, "task tsk_1 is "+string(from)+"; cancel_task needs an open state (requested, routed, accepted, working, waiting, verifying or approval)")
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if m.Task.State != task.Cancelled || m.Task.WaitingOn != nil {
				t.Errorf("task = %s waiting on %v, want cancelled waiting on nothing", m.Task.State, deref(m.Task.WaitingOn))
			}
			if m.Event.Action != "cancel" || m.Event.Note == nil || *m.Event.Note != "launch moved" {
				t.Errorf("event = %+v, want action cancel with the reason as note", m.Event)
			}
		})
	}
	t.Run("by the assignee", func(t *testing.T) {
		_, err := task.Cancel(inState(task.Working), assignee, "no", now)
		assertRefusal(t, err, "cancel_task on task tsk_1 is for its requester (alice/writer); you are bob/reviewer, and the task is working")
	})
}

func TestOpenStates(t *testing.T) {
	closed := []task.State{task.Completed, task.Rejected, task.Cancelled}
	for _, s := range task.States {
		if got, want := s.Open(), !slices.Contains(closed, s); got != want {
			t.Errorf("%s.Open() = %v, want %v", s, got, want)
		}
	}
	if len(task.States) != 10 {
		t.Errorf("States has %d entries, the seed enum has 10", len(task.States))
	}
}

func TestReviewVerdicts(t *testing.T) {
	cases := []struct {
		name, verdict, feedback string
		needsOwner              bool
		to                      task.State
		wait                    *string
		refusal                 string
	}{
		{name: "accept completes", verdict: "accept", to: task.Completed},
		{name: "accept with feedback keeps it as note", verdict: "accept", feedback: "nice", to: task.Completed},
		{name: "accept needing owner approval waits on the owner", verdict: "accept", needsOwner: true, to: task.Approval, wait: ptr(task.WaitingOnOwnerApproval)},
		{name: "rework goes back to working", verdict: "rework", feedback: "add a test", to: task.Working},
		{name: "rework ignores owner approval", verdict: "rework", feedback: "add a test", needsOwner: true, to: task.Working},
		{name: "reject ends the task", verdict: "reject", feedback: "wrong repo", to: task.Rejected},
		{name: "rework without feedback", verdict: "rework", refusal: "review_result with verdict rework needs feedback saying what to change"},
		{name: "rework with blank feedback", verdict: "rework", feedback: " \n\t", refusal: "review_result with verdict rework needs feedback saying what to change"},
		{name: "reject without feedback", verdict: "reject", refusal: "review_result with verdict reject needs feedback saying what to change"},
		{name: "unknown verdict", verdict: "maybe", feedback: "hm", refusal: `verdict "maybe" is not one of accept, rework or reject`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := task.Review(inState(task.Verifying), requester, c.verdict, c.feedback, c.needsOwner, now)
			if c.refusal != "" {
				assertRefusal(t, err, c.refusal)
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if m.Task.State != c.to || !equalPtr(m.Task.WaitingOn, c.wait) {
				t.Errorf("task = %s waiting on %v, want %s waiting on %v", m.Task.State, deref(m.Task.WaitingOn), c.to, deref(c.wait))
			}
			wantNote := ptr(c.feedback)
			if c.feedback == "" {
				wantNote = nil
			}
			if !equalPtr(m.Event.Note, wantNote) {
				t.Errorf("history note = %q, want %q (the feedback, null when none)", deref(m.Event.Note), deref(wantNote))
			}
		})
	}
}

func TestSaveCheckpoint(t *testing.T) {
	cp := task.Checkpoint{Progress: "drafted", Decisions: []string{"short CTA"}, FilesTouched: []string{"hero.md"}, NextSteps: []string{}, OpenQuestions: []string{}}
	ownerWait := func() task.Task {
		t := inState(task.Waiting)
		t.WaitingOn = ptr(task.WaitingOnOwnerApproval)
		return t
	}
	cases := []struct {
		name      string
		from      task.Task
		waitingOn string
		to        task.State
		wait      *string
		refusal   string
	}{
		{name: "from accepted to working", from: inState(task.Accepted), to: task.Working},
		{name: "from waiting on a human back to working", from: inState(task.Waiting), to: task.Working},
		{name: "waiting on a human", from: inState(task.Working), waitingOn: task.WaitingOnHuman, to: task.Waiting, wait: ptr(task.WaitingOnHuman)},
		{name: "waiting on an agent", from: inState(task.Accepted), waitingOn: task.WaitingOnAgent, to: task.Waiting, wait: ptr(task.WaitingOnAgent)},
		{name: "a checkpoint does not end a wait on the owner", from: ownerWait(), to: task.Waiting, wait: ptr(task.WaitingOnOwnerApproval)},
		{name: "a wait on the owner outranks a wait on a human", from: ownerWait(), waitingOn: task.WaitingOnHuman, to: task.Waiting, wait: ptr(task.WaitingOnOwnerApproval)},
		{name: "the assignee cannot claim to wait on the owner", from: inState(task.Working), waitingOn: task.WaitingOnOwnerApproval,
			refusal: `waiting_on "owner_approval" is not one a checkpoint may set; use human or agent, or leave it out`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := task.SaveCheckpoint(c.from, assignee, cp, c.waitingOn, now)
			if c.refusal != "" {
				assertRefusal(t, err, c.refusal)
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if m.Task.State != c.to || !equalPtr(m.Task.WaitingOn, c.wait) {
				t.Errorf("task = %s waiting on %v, want %s waiting on %v", m.Task.State, deref(m.Task.WaitingOn), c.to, deref(c.wait))
			}
			if m.Task.LatestCheckpoint == nil || m.Task.LatestCheckpoint.Progress != "drafted" || len(m.Task.LatestCheckpoint.FilesTouched) != 1 {
				t.Errorf("latest checkpoint = %+v, want the saved one", m.Task.LatestCheckpoint)
			}
			if deref(m.Event.Note) != "drafted" {
				t.Errorf("history note = %q, want the progress", deref(m.Event.Note))
			}
		})
	}
}

func TestReturnResultStampsAndChecks(t *testing.T) {
	m, err := task.ReturnResult(inState(task.Working), assignee, goodResult(), now)
	if err != nil {
		t.Fatalf("refused: %v", err)
	}
	r := m.Task.Result
	if r == nil || r.ReturnedBy != assignee || !r.ReturnedAt.Equal(now) || r.Summary != "Fixed the footer." {
		t.Fatalf("result = %+v, want it stamped by %s at %v", r, assignee, now)
	}
	if deref(m.Event.Note) != "Fixed the footer." {
		t.Errorf("history note = %q, want the summary", deref(m.Event.Note))
	}
	notes := task.Result{Summary: "done", Evidence: []task.Evidence{{Kind: "note", Summary: "trust me"}}, Provenance: task.ProvenanceAgentGenerated}
	_, err = task.ReturnResult(inState(task.Working), assignee, notes, now)
	assertRefusal(t, err, "a code result needs evidence of kind test_output, commit or pull_request; got note")
}

func TestRoute(t *testing.T) {
	for _, from := range task.States {
		t.Run("from "+string(from), func(t *testing.T) {
			m, err := task.Route(inState(from), now)
			if from != task.Requested {
				assertRefusal(t, err, "task tsk_1 is "+string(from)+"; routing needs requested")
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if m.Task.State != task.Routed || m.Event.By != task.System || m.Event.Action != "route" {
				t.Errorf("move = %s by %s (%s), want routed by %s (route)", m.Task.State, m.Event.By, m.Event.Action, task.System)
			}
		})
	}
}

func assertRefusal(t *testing.T, err error, want string) {
	t.Helper()
	var r *task.Refusal
	if !errors.As(err, &r) {
		t.Fatalf("err = %v, want a refusal %q", err, want)
	}
	if r.Msg != want {
		t.Errorf("refusal = %q\n want     %q", r.Msg, want)
	}
}

func equalPtr(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func deref(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

func TestDecideApproval(t *testing.T) {
	withResult := func(s task.State) task.Task {
		t := inState(s)
		r := goodResult()
		r.ReturnedBy, r.ReturnedAt = assignee, created
		t.Result = &r
		return t
	}
	cases := []struct {
		name    string
		from    task.Task
		owner   string
		approve bool
		to      task.State
		action  string
		prov    string
		refusal string
	}{
		{name: "approve completes with owner_approved provenance", from: withResult(task.Approval), owner: "bob", approve: true,
			to: task.Completed, action: "owner_approve", prov: task.ProvenanceOwnerApproved},
		{name: "refuse sends back to working and keeps the result", from: withResult(task.Approval), owner: "bob",
			to: task.Working, action: "owner_refuse", prov: task.ProvenanceAgentGenerated},
		{name: "the requester's owner may not decide", from: withResult(task.Approval), owner: "alice", approve: true,
			refusal: "the result of task tsk_1 is for bob, the owner of bob/reviewer, to approve; you are alice"},
		{name: "only in approval", from: withResult(task.Verifying), owner: "bob", approve: true,
			refusal: "task tsk_1 is verifying; owner approval needs approval"},
		{name: "not after completion", from: withResult(task.Completed), owner: "bob", approve: true,
			refusal: "task tsk_1 is completed; owner approval needs approval"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := c.from
			m, err := task.DecideApproval(before, c.owner, c.approve, "looks right", now)
			if c.refusal != "" {
				assertRefusal(t, err, c.refusal)
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if m.Task.State != c.to || m.Task.WaitingOn != nil {
				t.Errorf("task = %s waiting on %v, want %s waiting on nothing", m.Task.State, deref(m.Task.WaitingOn), c.to)
			}
			if m.Task.Result == nil || m.Task.Result.Provenance != c.prov {
				t.Errorf("result = %+v, want provenance %s", m.Task.Result, c.prov)
			}
			if before.Result.Provenance != task.ProvenanceAgentGenerated {
				t.Errorf("the decision changed the stored result it was given")
			}
			if m.Event.By != "owner:"+c.owner || m.Event.Action != c.action || deref(m.Event.Note) != "looks right" {
				t.Errorf("event = by %s action %s note %q, want by owner:%s action %s with the message", m.Event.By, m.Event.Action, deref(m.Event.Note), c.owner, c.action)
			}
		})
	}
}

// TestNoAgentAcceptsItsOwnResult: the self rule. An agent may not hand a
// task to itself (it would review its own result), and review_result
// cannot accept a result its caller returned, on a task stored before the
// rule with the same requester and assignee; rework and reject stay open
// there so such a task can still be ended or sent back.
func TestNoAgentAcceptsItsOwnResult(t *testing.T) {
	if err := task.CheckHandOff(requester, assignee); err != nil {
		t.Errorf("hand-off to another agent refused: %v", err)
	}
	if err := task.CheckHandOff("alice/writer", "alice/builder"); err != nil {
		t.Errorf("hand-off to another agent of the same owner refused: %v", err)
	}
	assertRefusal(t, task.CheckHandOff(requester, requester), "alice/writer may not hand a task to itself: the requester reviews the assignee's result, and no agent accepts its own result; hand it to another agent of the project")

	self := inState(task.Verifying)
	self.Assignee = requester
	self.Result = &task.Result{Summary: "done", ReturnedBy: requester}
	_, err := task.Review(self, requester, "accept", "", false, now)
	assertRefusal(t, err, "alice/writer returned the result of task tsk_1 and may not accept it: no agent accepts its own result; review it with rework or reject, or cancel the task")
	if _, err := task.Review(self, requester, "reject", "I should not review myself", false, now); err != nil {
		t.Errorf("reject of an own result refused: %v", err)
	}
	if _, err := task.Review(self, requester, "rework", "again", false, now); err != nil {
		t.Errorf("rework of an own result refused: %v", err)
	}
}
