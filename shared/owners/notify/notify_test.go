package notify_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/auth/link"
	"github.com/useprickle/prickle/shared/domain/event"
	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/owners/notify"
	"github.com/useprickle/prickle/shared/owners/notify/outbox"
	"github.com/useprickle/prickle/shared/team"
)

var (
	now    = time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	signer = link.Signer{Key: []byte("0123456789abcdef0123456789abcdef")}
)

// owners is the directory's owners in memory.
type owners map[string]team.Owner

func (o owners) Owner(_ context.Context, name string) (team.Owner, error) {
	if v, ok := o[name]; ok {
		return v, nil
	}
	return team.Owner{}, team.ErrNotFound
}

// ledger is the store's sent markers and Slack refs in memory.
type ledger struct {
	mu   sync.Mutex
	sent map[string]bool
	refs map[string][2]string
}

func newLedger() *ledger { return &ledger{sent: map[string]bool{}, refs: map[string][2]string{}} }

func (l *ledger) ClaimSend(_ context.Context, id, ch string, _ time.Time) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.sent[id+"|"+ch] {
		return false, nil
	}
	l.sent[id+"|"+ch] = true
	return true, nil
}

func (l *ledger) ReleaseSend(_ context.Context, id, ch string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.sent, id+"|"+ch)
	return nil
}

func (l *ledger) PutSlackRef(_ context.Context, taskID, subject, channel, ts string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refs[taskID+"#"+subject] = [2]string{channel, ts}
	return nil
}

func (l *ledger) SlackRef(_ context.Context, taskID, subject string) (string, string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r, ok := l.refs[taskID+"#"+subject]
	if !ok {
		return "", "", team.ErrNotFound
	}
	return r[0], r[1], nil
}

// flakyMail fails its first n sends.
type flakyMail struct {
	notify.Mailer
	fails int
}

func (f *flakyMail) SendEmail(ctx context.Context, e notify.Email) error {
	if f.fails > 0 {
		f.fails--
		return errors.New("SES throttled")
	}
	return f.Mailer.SendEmail(ctx, e)
}

type fixture struct {
	n   *notify.Notifier
	box *outbox.Outbox
	led *ledger
}

func newFixture() fixture {
	box := outbox.New()
	box.Now = func() time.Time { return now }
	led := newLedger()
	n := &notify.Notifier{
		Owners: owners{
			"alice": {Name: "alice", Email: "alice@example.com", SlackChannel: "C0ALICE"},
			"bob":   {Name: "bob", Email: "bob@example.com"},
		},
		Ledger: led, Mail: box, Slack: box, Signer: signer, BaseURL: "https://app.example.com/",
		Now: func() time.Time { return now }, Log: slog.New(slog.DiscardHandler),
	}
	return fixture{n: n, box: box, led: led}
}

func pendingStep() step.Step {
	return step.Step{
		ID: "stp_1", TaskID: "tsk_1", Project: "website-v2", Agent: "alice/writer", RunID: "run_1",
		ToolName: "Bash", Input: json.RawMessage(`{"command":"git push origin main && echo <done>"}`),
		Kind: "outbound", Target: "origin", Reason: "Publish the reviewed branch.",
		Status: step.Pending, CreatedAt: now, ExpiresAt: now.Add(24 * time.Hour),
	}
}

func approvalTask() task.Task {
	return task.Task{
		ID: "tsk_2", Project: "website-v2", State: task.Approval, Requester: "bob/reviewer", Assignee: "alice/builder",
		Packet: task.Packet{Task: "Build the pricing page", DeliverableType: "code"},
		Result: &task.Result{
			Summary: "Pricing page built; tests pass.", Provenance: "agent_generated", ReturnedBy: "alice/builder",
			Evidence: []task.Evidence{
				{Kind: "pull_request", Summary: "PR #12", URL: "https://github.com/acme/site/pull/12"},
				{Kind: "test_output", Summary: "go test", Content: "ok  \tsite\t0.2s"},
			},
		},
		Version: 7,
	}
}

func TestStepRequestedSendsTheExactCallOnce(t *testing.T) {
	f := newFixture()
	ctx := context.Background()
	s := pendingStep()
	e := event.ForStep(event.StepRequested, s, s.Agent, now)
	for range 3 { // redelivered: still one email and one Slack message
		if err := f.n.Handle(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	msgs := f.box.List()
	if len(msgs) != 2 {
		t.Fatalf("outbox has %d messages, want 2: %+v", len(msgs), msgs)
	}
	for _, m := range msgs {
		for _, want := range []string{"Bash", "outbound", "origin", "Publish the reviewed branch.", "alice/writer", "tsk_1", "git push origin main"} {
			if !strings.Contains(m.Text, want) && !strings.Contains(string(m.Body), want) {
				t.Errorf("%s message lacks %q:\n%s", m.Channel, want, m.Text)
			}
		}
		if len(m.Links) != 1 || !strings.HasPrefix(m.Links[0], "https://app.example.com/a/") {
			t.Fatalf("%s links = %v", m.Channel, m.Links)
		}
		claims, err := signer.Verify(strings.TrimPrefix(m.Links[0], "https://app.example.com/a/"), now)
		if err != nil {
			t.Fatal(err)
		}
		// Each destination gets its own link, signed with where it went.
		want := link.ForStep("tsk_1", "stp_1", "alice", s.ExpiresAt).DeliveredBy(m.Channel)
		claims.Nonce = ""
		if claims != want {
			t.Errorf("claims = %+v, want %+v", claims, want)
		}
	}
	email, slack := msgs[0], msgs[1]
	if email.Channel != "email" || email.To != "alice@example.com" || !strings.Contains(email.Text, "\"command\": \"git push origin main && echo <done>\"") {
		t.Errorf("email = %+v", email)
	}
	if slack.Channel != "slack" || slack.To != "C0ALICE" {
		t.Errorf("slack = %+v", slack)
	}
	// Slack shows rich text as it is, so the input is sent as typed, nothing escaped.
	if !strings.Contains(string(slack.Body), `{"elements":[{"text":"{\n  \"command\": \"git push origin main && echo <done>\"\n}","type":"text"}],"type":"rich_text_preformatted"}`) {
		t.Errorf("slack body does not show the input as typed: %s", slack.Body)
	}
}

func TestStepSettledUpdatesTheSlackMessageInPlace(t *testing.T) {
	ctx := context.Background()
	decidedAt := now.Add(time.Hour)
	approved := pendingStep()
	approved.Status, approved.DecidedBy, approved.DecidedAt = step.Approved, "alice", &decidedAt
	refused := pendingStep()
	refused.Status, refused.DecidedBy, refused.DecidedAt, refused.Message = step.Refused, "alice", &decidedAt, "not on a Friday"
	edited := approved
	edited.Edited = json.RawMessage(`{"command":"git push origin feature/x"}`)
	tests := []struct {
		name  string
		event event.Event
		want  string
	}{
		{"approved", event.ForStep(event.StepDecided, approved, "owner:alice", decidedAt), "Approved by alice at 2026-11-29T10:00:00Z"},
		{"approved as edited", event.ForStep(event.StepDecided, edited, "owner:alice", decidedAt),
			"Approved as edited by alice at 2026-11-29T10:00:00Z: the run may make the edited call (below) instead of the one it asked"},
		{"refused", event.ForStep(event.StepDecided, refused, "owner:alice", decidedAt), `Refused by alice at 2026-11-29T10:00:00Z. Message: "not on a Friday"`},
		{"expired", event.ForStep(event.StepExpired, pendingStep(), task.System, now.Add(25*time.Hour)), "Expired at 2026-11-30T09:00:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture()
			s := pendingStep()
			if err := f.n.Handle(ctx, event.ForStep(event.StepRequested, s, s.Agent, now)); err != nil {
				t.Fatal(err)
			}
			for range 2 {
				if err := f.n.Handle(ctx, tt.event); err != nil {
					t.Fatal(err)
				}
			}
			msgs := f.box.List()
			if len(msgs) != 4 {
				t.Fatalf("outbox has %d messages, want 4", len(msgs))
			}
			email, update := msgs[2], msgs[3]
			if email.Channel != "email" || !strings.Contains(email.Text, tt.want) {
				t.Errorf("email = %q, want it to contain %q", email.Text, tt.want)
			}
			var body struct {
				UpdateOf string `json:"update_of"`
			}
			if err := json.Unmarshal(update.Body, &body); err != nil {
				t.Fatal(err)
			}
			if update.Channel != "slack" || !strings.HasPrefix(update.Subject, "updated: ") || body.UpdateOf != "outbox.000001" {
				t.Errorf("slack update = %+v (%s)", update, update.Body)
			}
			if !strings.Contains(update.Text, tt.want) || strings.Contains(string(update.Body), "/a/") {
				t.Errorf("slack update should say %q and carry no approval link: %s", tt.want, update.Body)
			}
		})
	}
}

// The decided message of an edited approval shows the call as asked and the
// edit, in the email and in Slack; one approved as asked shows one input.
func TestEditedStepSettledShowsBothInputs(t *testing.T) {
	ctx := context.Background()
	at := now.Add(time.Minute)
	for _, tc := range []struct {
		name   string
		edited string
		want   []string
		not    []string
	}{
		{"edited", `{"command":"git push origin feature/x"}`,
			[]string{"Input as asked:", "git push origin main && echo <done>", "Input as alice edited it:", "git push origin feature/x"}, nil},
		{"as asked", "", []string{"Input:", "git push origin main && echo <done>"}, []string{"edited", "Input as asked"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture()
			s := pendingStep()
			s.Status, s.DecidedBy, s.DecidedAt = step.Approved, "alice", &at
			if tc.edited != "" {
				s.Edited = json.RawMessage(tc.edited)
			}
			if err := f.n.Handle(ctx, event.ForStep(event.StepDecided, s, "owner:alice", at)); err != nil {
				t.Fatal(err)
			}
			for _, m := range f.box.List() {
				text := m.Text
				if m.Channel == "slack" { // the labels are bold text elements there
					text = strings.NewReplacer(`"Input as asked"`, "Input as asked:", `"Input as alice edited it"`, "Input as alice edited it:", `"Input"`, "Input:").Replace(string(m.Body))
				}
				for _, w := range tc.want {
					if !strings.Contains(text, w) {
						t.Errorf("%s message lacks %q:\n%s", m.Channel, w, text)
					}
				}
				for _, w := range tc.not {
					if strings.Contains(text, w) {
						t.Errorf("%s message says %q:\n%s", m.Channel, w, text)
					}
				}
			}
		})
	}
}

func TestResultApprovalAndDecision(t *testing.T) {
	f := newFixture()
	ctx := context.Background()
	tk := approvalTask()
	e := event.ForTask(event.ApprovalRequested, tk, "bob/reviewer", now)
	for range 2 {
		if err := f.n.Handle(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	msgs := f.box.List()
	if len(msgs) != 2 {
		t.Fatalf("outbox has %d messages, want 2", len(msgs))
	}
	for _, m := range msgs {
		if len(m.Links) != 2 || m.Links[1] != "https://github.com/acme/site/pull/12" {
			t.Fatalf("%s links = %v: want the approval link, then the evidence", m.Channel, m.Links)
		}
		claims, err := signer.Verify(strings.TrimPrefix(m.Links[0], "https://app.example.com/a/"), now)
		if err != nil {
			t.Fatal(err)
		}
		claims.Nonce = ""
		if want := link.ForResult("tsk_2", task.ResultRound(tk), "alice", now).DeliveredBy(m.Channel); claims != want {
			t.Errorf("claims = %+v, want %+v", claims, want)
		}
		for _, want := range []string{"Pricing page built; tests pass.", "pull_request: PR #12", "Build the pricing page", "agent_generated"} {
			if !strings.Contains(m.Text, want) && !strings.Contains(string(m.Body), want) {
				t.Errorf("%s message lacks %q", m.Channel, want)
			}
		}
	}

	done := tk
	done.State, done.Version = task.Completed, 8
	done.Result.Provenance = task.ProvenanceOwnerApproved
	if err := f.n.Handle(ctx, event.ForTask(event.ResultDecided, done, "owner:alice", now.Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	msgs = f.box.List()
	if len(msgs) != 4 || !strings.Contains(msgs[2].Text, "Approved by alice") || !strings.HasPrefix(msgs[3].Subject, "updated: ") {
		t.Fatalf("after the decision: %+v", msgs[2:])
	}
}

func TestFailedSendIsRetriedAndSentOnce(t *testing.T) {
	f := newFixture()
	ctx := context.Background()
	f.n.Mail = &flakyMail{Mailer: f.box, fails: 1}
	s := pendingStep()
	e := event.ForStep(event.StepRequested, s, s.Agent, now)
	if err := f.n.Handle(ctx, e); err == nil || !strings.Contains(err.Error(), "SES throttled") {
		t.Fatalf("first delivery: err = %v, want the SES failure (so EventBridge retries)", err)
	}
	if err := f.n.Handle(ctx, e); err != nil {
		t.Fatal(err)
	}
	var emails, slacks int
	for _, m := range f.box.List() {
		switch m.Channel {
		case "email":
			emails++
		case "slack":
			slacks++
		}
	}
	if emails != 1 || slacks != 1 {
		t.Errorf("sent %d emails and %d Slack messages, want 1 and 1", emails, slacks)
	}
}

func TestChannelsFollowTheOwner(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name     string
		agent    string
		mailOff  bool
		channels []string
	}{
		{"email and slack", "alice/writer", false, []string{"email", "slack"}},
		{"email only owner", "bob/reviewer", false, []string{"email"}},
		{"email turned off", "alice/writer", true, []string{"slack"}},
		{"unknown owner", "zed/bot", false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture()
			if tt.mailOff {
				f.n.Mail = nil
			}
			s := pendingStep()
			s.Agent = tt.agent
			if err := f.n.Handle(ctx, event.ForStep(event.StepRequested, s, s.Agent, now)); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range f.box.List() {
				got = append(got, m.Channel)
			}
			if strings.Join(got, ",") != strings.Join(tt.channels, ",") {
				t.Errorf("channels = %v, want %v", got, tt.channels)
			}
		})
	}
}

func TestOtherEventsAreIgnored(t *testing.T) {
	f := newFixture()
	if err := f.n.Handle(context.Background(), event.ForTask(event.TaskRouted, approvalTask(), "bob/reviewer", now)); err != nil {
		t.Fatal(err)
	}
	if n := len(f.box.List()); n != 0 {
		t.Errorf("a Task Routed event sent %d messages", n)
	}
}

func TestStepRequestSaysWhatTheBudgetLeaves(t *testing.T) {
	f := newFixture()
	s := pendingStep()
	s.Kind, s.Amount = "spending", &step.Amount{Value: 20, Unit: "USD"}
	s.BudgetNote = "over budget: alice/writer asks 20 USD, 5 USD left of 50 USD today for alice/writer (budget of alice)"
	if err := f.n.Handle(context.Background(), event.ForStep(event.StepRequested, s, s.Agent, now)); err != nil {
		t.Fatal(err)
	}
	msgs := f.box.List()
	if len(msgs) != 2 {
		t.Fatalf("outbox has %d messages, want 2", len(msgs))
	}
	for _, m := range msgs {
		if !strings.Contains(m.Text, "5 USD left of 50 USD") && !strings.Contains(string(m.Body), "5 USD left of 50 USD") {
			t.Errorf("%s message does not say what is left:\n%s", m.Channel, m.Text)
		}
	}
}

// TestPermissionLayerStepSaysWhatTheCallDoes: a step asked by Claude Code's
// permission layer carries only tool_name and input (no kind, target or
// reason); the email and Slack message still say what the call does, and
// the subject has no placeholder dash.
func TestPermissionLayerStepSaysWhatTheCallDoes(t *testing.T) {
	for _, tc := range []struct {
		tool, input string
		want        []string
	}{
		{"Bash", `{"command":"git push origin main","description":"Publish the branch"}`, []string{"run the shell command `git push origin main`", "Publish the branch"}},
		{"Write", `{"file_path":"/repo/site/hero.md","content":"# Hi"}`, []string{"write the file /repo/site/hero.md"}},
		{"WebFetch", `{"url":"https://example.com/pricing","prompt":"prices"}`, []string{"fetch https://example.com/pricing"}},
		{"mcp__github__create_pull_request", `{"title":"Hero"}`, []string{"call the tool create_pull_request of the MCP server github"}},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			f := newFixture()
			s := pendingStep()
			s.ToolName, s.Input, s.Kind, s.Target, s.Reason = tc.tool, json.RawMessage(tc.input), "", "", ""
			if err := f.n.Handle(context.Background(), event.ForStep(event.StepRequested, s, s.Agent, now)); err != nil {
				t.Fatal(err)
			}
			msgs := f.box.List()
			if len(msgs) != 2 {
				t.Fatalf("outbox has %d messages, want 2", len(msgs))
			}
			for _, m := range msgs {
				if strings.Contains(m.Subject, "—") {
					t.Errorf("%s subject has a dash: %q", m.Channel, m.Subject)
				}
				if !strings.Contains(m.Subject, tc.want[0]) {
					t.Errorf("%s subject %q does not say %q", m.Channel, m.Subject, tc.want[0])
				}
				for _, w := range tc.want {
					if !strings.Contains(m.Text, w) && !strings.Contains(string(m.Body), w) {
						t.Errorf("%s message lacks %q:\n%s\n%s", m.Channel, w, m.Text, m.Body)
					}
				}
			}
		})
	}
}
