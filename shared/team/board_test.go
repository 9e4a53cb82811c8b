package team_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/team"
)

// An owner on the board acts through one of their own agents: the hand-off
// and the review are the tools' own (same rules, same refusals), the
// history line is the owner's with where in its note, and the audit has it once.
func TestOwnerOnTheBoard(t *testing.T) {
	f := newFixture(t)
	f.store.AddAgent(team.Agent{ID: "alice/builder", Owner: "alice", Projects: []string{"website-v2"}})
	in := team.HandOffInput{Project: "website-v2", Assignee: "alice/writer", Packet: task.Packet{Task: "Write it", DeliverableType: "design", AcceptanceCriteria: []string{"done"}}}
	const via = "project board (signed in by email link)"

	for _, tc := range []struct {
		name, owner, requester, says string
		in                           team.HandOffInput
	}{
		{"another owner's agent", "alice", "bob/reviewer", "bob/reviewer is not one of your agents", in},
		{"an owner's name spoofed", "bob", "alice/builder", "alice/builder is not one of your agents", in},
		{"no owner", "", "alice/builder", "is not one of your agents", in},
		{"an agent that does not exist", "alice", "alice/ghost", "alice/ghost is not one of your agents", in},
		{"a task to itself", "alice", "alice/writer", "may not hand a task to itself", in},
		{"a project the requester is not in", "alice", "alice/builder", "no project mobile that alice/builder belongs to",
			team.HandOffInput{Project: "mobile", Assignee: "bob/reviewer", Packet: in.Packet}},
	} {
		_, err := f.svc.HandOffOnBoard(ctx, tc.owner, tc.requester, via, tc.in)
		var refusal *task.Refusal
		if !errors.As(err, &refusal) || !strings.Contains(refusal.Msg, tc.says) {
			t.Errorf("%s: %v, want a refusal saying %q", tc.name, err, tc.says)
		}
	}

	tk := f.must(f.svc.HandOffOnBoard(ctx, "alice", "alice/builder", via, in))
	if tk.Requester != "alice/builder" || tk.Assignee != "alice/writer" || tk.State != task.Routed {
		t.Fatalf("task %+v", tk)
	}
	h, _ := f.store.History(ctx, tk.ID)
	if h[0].By != "owner:alice" || h[0].Note == nil || *h[0].Note != "by alice on the "+via+", as alice/builder" {
		t.Fatalf("history %+v", h[0])
	}
	f.advance(time.Second)
	f.must(f.svc.AcceptTask(ctx, alice, team.AcceptInput{TaskID: tk.ID}))
	f.advance(time.Second)
	f.must(f.svc.ReturnResult(ctx, alice, team.ReturnResultInput{TaskID: tk.ID, Summary: "done", Evidence: []task.Evidence{{Kind: "link", Summary: "it", URL: "https://example.org"}}}))
	if _, err := f.svc.ReviewOnBoard(ctx, "bob", "task page", team.ReviewInput{TaskID: tk.ID, Verdict: "accept"}); err == nil || !strings.Contains(err.Error(), "alice/builder is not one of your agents") {
		t.Fatalf("bob reviews alice/builder's result: %v", err)
	}
	if _, err := f.svc.ReviewOnBoard(ctx, "alice", "task page", team.ReviewInput{TaskID: "tsk_nope", Verdict: "accept"}); err == nil || !strings.Contains(err.Error(), "no task tsk_nope") {
		t.Fatalf("a task that does not exist: %v", err)
	}
	f.advance(time.Second)
	got := f.must(f.svc.ReviewOnBoard(ctx, "alice", "task page", team.ReviewInput{TaskID: tk.ID, Verdict: "accept"}))
	if got.State != task.Approval { // website-v2 asks the owner's approval of designs
		t.Fatalf("after accept: %s", got.State)
	}
	h, _ = f.store.History(ctx, tk.ID)
	if last := h[len(h)-1]; last.Action != "review_accept" || last.By != "owner:alice" || *last.Note != "by alice on the task page, as alice/builder" {
		t.Fatalf("review line %+v", last)
	}
	entries, err := f.svc.ProjectAudit(ctx, "website-v2")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, e := range entries {
		if e.TaskID == tk.ID {
			lines = append(lines, e.Action+" "+e.Actor+" "+e.Via)
		}
	}
	want := []string{"hand_off owner:alice " + via, "accept alice/writer mcp", "return_result alice/writer mcp", "review_accept owner:alice task page"}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("audit:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}
