package audit_test

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/domain/audit"
	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/domain/task"
)

func TestForStep(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	base := step.Step{ID: "stp_1", TaskID: "t1", Project: "web", Agent: "alice/builder", ToolName: "Bash",
		Input: []byte(`{"command":"git push origin main"}`), DecidedBy: "alice"}
	with := func(status step.Status, mod func(*step.Step)) step.Step {
		s := base
		s.Status = status
		if mod != nil {
			mod(&s)
		}
		return s
	}
	cases := []struct {
		name                    string
		s                       step.Step
		prev                    step.Status
		action, actor, via, grt string
	}{
		{"asked", with(step.Pending, func(s *step.Step) { s.DecidedBy = "" }), "", audit.StepAsked, "alice/builder", audit.ViaMCP, ""},
		{"approved on the page", with(step.Approved, func(s *step.Step) { s.DecidedVia = audit.ViaPage }), step.Pending, audit.StepApproved, "owner:alice", audit.ViaPage, ""},
		{"approved, no via recorded", with(step.Approved, nil), step.Pending, audit.StepApproved, "owner:alice", audit.ViaLink, ""},
		{"refused in slack", with(step.Refused, func(s *step.Step) { s.DecidedVia = audit.ViaSlack; s.Message = "no" }), step.Pending, audit.StepRefused, "owner:alice", audit.ViaSlack, ""},
		{"allowed by a grant", with(step.Consumed, func(s *step.Step) { s.AllowedBy = "grant grt_9" }), "", audit.StepAllowed, "owner:alice", "grant grt_9", "grt_9"},
		{"allowed by a budget", with(step.Approved, func(s *step.Step) { s.AllowedBy = "budget USD" }), "", audit.StepAllowed, "owner:alice", "budget USD", ""},
		{"used after a grant", with(step.Consumed, func(s *step.Step) { s.AllowedBy = "grant grt_9" }), step.Approved, audit.StepUsed, "alice/builder", audit.ViaMCP, "grt_9"},
		{"used", with(step.Consumed, nil), step.Approved, audit.StepUsed, "alice/builder", audit.ViaMCP, ""},
		{"expired", with(step.Expired, nil), step.Pending, audit.StepExpired, "system", audit.ViaSystem, ""},
		{"withdrawn", with(step.Withdrawn, nil), step.Pending, audit.StepWithdrawn, "alice/builder", audit.ViaMCP, ""},
	}
	for _, c := range cases {
		e := audit.ForStep(c.s, c.prev, at)
		if e.Action != c.action || e.Actor != c.actor || e.Via != c.via || e.GrantID != c.grt {
			t.Errorf("%s: got %s by %s via %s grant %q; want %s by %s via %s grant %q", c.name, e.Action, e.Actor, e.Via, e.GrantID, c.action, c.actor, c.via, c.grt)
		}
		if e.Project != "web" || e.TaskID != "t1" || e.StepID != "stp_1" || !e.At.Equal(at) || !strings.Contains(e.Detail, "git push origin main") {
			t.Errorf("%s: entry %+v lacks its facts", c.name, e)
		}
	}
}

// An edited approval shows the call as asked and the edit, in the entry of
// the approval and in the entry of its use; other entries show no edit.
func TestForStepEdited(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	s := step.Step{ID: "stp_1", TaskID: "t1", Project: "web", Agent: "alice/builder", ToolName: "Bash", DecidedBy: "alice", DecidedVia: audit.ViaSlack,
		Input: []byte(`{"command":"git push --force origin main"}`), Edited: []byte(`{"command":"git push origin feature/x"}`)}
	for _, tc := range []struct {
		name   string
		status step.Status
		prev   step.Status
		action string
		want   string
	}{
		{"approved", step.Approved, step.Pending, audit.StepApproved,
			`Bash {"command":"git push --force origin main"}; edited by the owner to: Bash {"command":"git push origin feature/x"}`},
		{"used", step.Consumed, step.Approved, audit.StepUsed,
			`Bash {"command":"git push --force origin main"}; used as the owner edited it: Bash {"command":"git push origin feature/x"}`},
		{"expired unused", step.Expired, step.Approved, audit.StepExpired, `Bash {"command":"git push --force origin main"}`},
	} {
		s.Status = tc.status
		e := audit.ForStep(s, tc.prev, at)
		if e.Action != tc.action || e.Detail != tc.want {
			t.Errorf("%s: %s %q\n want %s %q", tc.name, e.Action, e.Detail, tc.action, tc.want)
		}
	}
	// A long edit is clipped, so the entry stays within MaxDetail.
	s.Status, s.Input, s.Edited = step.Approved, []byte(`{"command":"`+strings.Repeat("a", 5000)+`"}`), []byte(`{"command":"`+strings.Repeat("b", 5000)+`"}`)
	if e := audit.ForStep(s, step.Pending, at); len([]rune(e.Detail)) > audit.MaxDetail || !strings.Contains(e.Detail, "edited by the owner to: Bash {\"command\":\"bbb") {
		t.Errorf("a long edit: %d runes, %q", len([]rune(e.Detail)), e.Detail)
	}
}

func TestSortAndCSV(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	from := task.Working
	note := "=HYPERLINK(\"http://evil.example\")"
	entries := []audit.Entry{
		audit.FromHistory("web", "t1", task.Event{Seq: 2, At: t0.Add(time.Second), By: "bob/reviewer", Action: "review", From: &from, To: task.Completed, Note: &note}),
		{At: t0, Project: "web", Action: audit.GrantCreated, Actor: "owner:alice", Via: audit.ViaPage, GrantID: "grt_1", Detail: "-1+1", Key: "grt_1"},
	}
	audit.Sort(entries)
	if entries[0].Action != audit.GrantCreated {
		t.Fatalf("not in time order: %+v", entries)
	}
	var b bytes.Buffer
	if err := audit.WriteCSV(&b, entries); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || strings.Join(rows[0], ",") != strings.Join(audit.Columns, ",") {
		t.Fatalf("rows = %v", rows)
	}
	if rows[1][9] != "'-1+1" {
		t.Errorf("a formula-looking cell is not defused: %q", rows[1][9])
	}
	if !strings.HasPrefix(rows[2][9], "working → completed: =HYPERLINK") || rows[2][3] != "bob/reviewer" || rows[2][2] != "review" {
		t.Errorf("history row = %v", rows[2])
	}
}
