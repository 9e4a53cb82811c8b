package slack_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/auth/link"
	"github.com/useprickle/prickle/shared/domain/event"
	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/owners/notify"
	"github.com/useprickle/prickle/shared/owners/notify/outbox"
	"github.com/useprickle/prickle/shared/owners/slack"
	"github.com/useprickle/prickle/shared/team"
)

// Slack's side of the tests: the signing secret of the app, the workspace,
// and the people in the channel. alice owns alice/writer; bob is a teammate.
var (
	secret  = []byte("8f742231b10e8888abcd99yyyzzz85a5")
	signer  = link.Signer{Key: []byte("0123456789abcdef0123456789abcdef")}
	project = team.Project{Slug: "website-v2", Name: "Website v2", OwnerApprovalTypes: []string{"code"}, StepDeadline: 24 * time.Hour}
	writer  = team.Agent{ID: "alice/writer", Owner: "alice", Projects: []string{"website-v2"}}
	review  = team.Agent{ID: "bob/reviewer", Owner: "bob", Projects: []string{"website-v2"}}
	owners  = []team.Owner{
		{Name: "alice", Email: "alice@example.com", SlackChannel: "C0ALICE", SlackUserID: "U0ALICE"},
		{Name: "bob", Email: "bob@example.com", SlackChannel: "C0BOB", SlackUserID: "U0BOB"},
	}
)

const responseURL = "https://hooks.slack.com/actions/T0PRICKLE/1234567890/abcdefABCDEF"

// backend is one implementation of the ports: in memory, or the DynamoDB store.
type backend struct {
	store   team.Store
	owners  slack.Owners
	ledger  notify.Ledger
	replays slack.Replays
}

// harness is the endpoint in front of a backend, with notify turning the
// team service's events into Slack messages in a dev outbox, as the local stack does.
type harness struct {
	t     *testing.T
	b     backend
	svc   *team.Service
	n     *notify.Notifier
	box   *outbox.Outbox
	srv   *httptest.Server
	clock time.Time
	// spend is the model spend whose caps the Raise / Leave buttons decide.
	spend *team.ModelSpend
}

// syncEvents delivers the service's events to notify at once.
type syncEvents struct{ n *notify.Notifier }

func (s syncEvents) Publish(ctx context.Context, events ...event.Event) error {
	for _, e := range events {
		if err := s.n.Handle(ctx, e); err != nil {
			return err
		}
	}
	return nil
}

func newHarness(t *testing.T, b backend) *harness {
	t.Helper()
	h := &harness{t: t, b: b, box: outbox.New(), clock: time.Now().UTC()}
	log := slog.New(slog.DiscardHandler)
	h.svc = team.New(b.store)
	h.n = &notify.Notifier{Owners: b.owners, Ledger: b.ledger, Slack: h.box, Signer: signer, BaseURL: "https://app.example.com", Log: log}
	h.svc.Events = syncEvents{h.n}
	h.spend = team.NewModelSpend(b.store.(team.ModelSpendStore), syncEvents{h.n}, log)
	endpoint := slack.New(slack.Config{
		Secret: secret, Replays: b.replays, Signer: signer, Owners: b.owners, Steps: b.store, Decider: h.svc, Caps: h.spend, Slack: h.box,
		Now: func() time.Time { return h.clock }, Log: log,
	})
	mux := http.NewServeMux()
	mux.Handle(slack.Path, endpoint)
	h.srv = httptest.NewServer(mux)
	t.Cleanup(h.srv.Close)
	return h
}

// pendingStep creates a working task of alice/writer whose run asks for a git push;
// notify posts the Slack message with the buttons.
func (h *harness) pendingStep(taskID string) step.Step {
	h.t.Helper()
	return h.pendingCall(taskID, "Bash", `{"command":"git push origin main"}`)
}

// pendingCall is pendingStep asking for another call.
func (h *harness) pendingCall(taskID, tool, input string) step.Step {
	h.t.Helper()
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	tk := task.Task{
		ID: taskID, Project: "website-v2", State: task.Working, Requester: "bob/reviewer", Assignee: "alice/writer",
		Packet:    task.Packet{Task: "Publish the site", DeliverableType: "code", AcceptanceCriteria: []string{"pushed"}, Files: []string{}, DependsOn: []string{}},
		CreatedAt: now, UpdatedAt: now,
	}
	if err := h.b.store.CreateTask(ctx, tk, task.Event{At: now, By: "bob/reviewer", Action: "hand_off", To: task.Working}); err != nil {
		h.t.Fatal(err)
	}
	run := identity.Caller{Agent: "alice/writer", Owner: "alice", Kind: identity.KindRun, TaskID: taskID, RunID: "run_1"}
	out, err := h.svc.RequestStep(ctx, run, team.RequestStepInput{
		ToolName: tool, Input: json.RawMessage(input),
		Kind: "outbound", Target: "origin", Reason: "Publish the reviewed branch.",
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return h.step(taskID, out.StepID)
}

func (h *harness) step(taskID, stepID string) step.Step {
	h.t.Helper()
	st, err := h.b.store.Step(context.Background(), taskID, stepID)
	if err != nil {
		h.t.Fatal(err)
	}
	return st
}

func (h *harness) task(id string) task.Task {
	h.t.Helper()
	tk, err := h.b.store.Task(context.Background(), id)
	if err != nil {
		h.t.Fatal(err)
	}
	return tk
}

// resultAwaitingApproval creates a task whose accepted result waits for alice, and notifies her.
func (h *harness) resultAwaitingApproval(taskID string) task.Task {
	h.t.Helper()
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	tk := task.Task{
		ID: taskID, Project: "website-v2", State: task.Approval, Requester: "bob/reviewer", Assignee: "alice/writer",
		Packet: task.Packet{Task: "Build the pricing page", DeliverableType: "code", AcceptanceCriteria: []string{"tests pass"}, Files: []string{}, DependsOn: []string{}},
		Result: &task.Result{
			Summary: "Pricing page built; all tests pass.", Provenance: task.ProvenanceAgentGenerated, ReturnedBy: "alice/writer", ReturnedAt: now,
			Evidence: []task.Evidence{{Kind: "pull_request", Summary: "PR #12", URL: "https://github.com/acme/site/pull/12"}},
		},
		CreatedAt: now, UpdatedAt: now,
	}
	if err := h.b.store.CreateTask(ctx, tk, task.Event{At: now, By: "bob/reviewer", Action: "review_accept", To: task.Approval}); err != nil {
		h.t.Fatal(err)
	}
	if err := h.n.Handle(ctx, event.ForTask(event.ApprovalRequested, h.task(taskID), "bob/reviewer", now)); err != nil {
		h.t.Fatal(err)
	}
	return h.task(taskID)
}

// slackMessage is a Slack message of the outbox as chat.postMessage / chat.update carried it.
type slackMessage struct {
	TS       string `json:"ts"`
	UpdateOf string `json:"update_of"`
	Text     string `json:"text"`
	Blocks   []struct {
		Type     string           `json:"type"`
		BlockID  string           `json:"block_id"`
		Elements []map[string]any `json:"elements"`
	} `json:"blocks"`
	raw string
}

// messages returns the outbox's Slack messages whose subject starts with prefix, oldest first.
func (h *harness) messages(prefix string) []slackMessage {
	h.t.Helper()
	var out []slackMessage
	for _, m := range h.box.List() {
		if m.Channel != outbox.ChannelSlack || !strings.HasPrefix(m.Subject, prefix) {
			continue
		}
		var s slackMessage
		if err := json.Unmarshal(m.Body, &s); err != nil {
			h.t.Fatal(err)
		}
		s.raw = string(m.Body)
		out = append(out, s)
	}
	return out
}

// ephemerals returns the texts of the ephemeral answers sent so far.
func (h *harness) ephemerals() []string {
	var out []string
	for _, m := range h.box.List() {
		if strings.HasPrefix(m.Subject, "ephemeral: ") {
			out = append(out, m.Text)
		}
	}
	return out
}

// buttonValue is the value of the button actionID in the newest Slack message that has it.
func (h *harness) buttonValue(actionID string) string {
	h.t.Helper()
	msgs := h.messages("")
	for i := len(msgs) - 1; i >= 0; i-- {
		for _, b := range msgs[i].Blocks {
			for _, el := range b.Elements {
				if el["action_id"] == actionID {
					return el["value"].(string)
				}
			}
		}
	}
	h.t.Fatalf("no %s button in the outbox: %+v", actionID, h.box.List())
	return ""
}

// blockActions is Slack's block_actions payload for a click on a button of
// Prickle's message, in the shape Slack documents (fields Prickle ignores included).
func blockActions(user, actionID, value string) map[string]any {
	return map[string]any{
		"type":       "block_actions",
		"user":       map[string]any{"id": user, "username": strings.ToLower(user), "name": strings.ToLower(user), "team_id": "T0PRICKLE"},
		"api_app_id": "A0PRICKLE",
		"token":      "verification-token-deprecated",
		"container":  map[string]any{"type": "message", "message_ts": "1733050000.000100", "channel_id": "C0ALICE", "is_ephemeral": false},
		"trigger_id": "13345224609.738474920.8088930838d88f008e0",
		"team":       map[string]any{"id": "T0PRICKLE", "domain": "prickle"},
		"enterprise": nil, "is_enterprise_install": false,
		"channel":      map[string]any{"id": "C0ALICE", "name": "alice-agents"},
		"message":      map[string]any{"type": "message", "ts": "1733050000.000100", "text": "Approve Bash for alice/writer?"},
		"state":        map[string]any{"values": map[string]any{}},
		"response_url": responseURL,
		"actions": []any{map[string]any{
			"action_id": actionID, "block_id": notify.DecideBlockID, "type": "button", "value": value,
			"text": map[string]any{"type": "plain_text", "text": "Approve", "emoji": true}, "action_ts": "1733050001.000200",
		}},
	}
}

// viewSubmission is Slack's view_submission payload for the Refuse modal
// (the modal as opened, with the typed message in its state).
func viewSubmission(user string, view json.RawMessage, message string) map[string]any {
	var v map[string]any
	if err := json.Unmarshal(view, &v); err != nil {
		panic(err)
	}
	v["id"], v["team_id"], v["hash"] = "V0MODAL", "T0PRICKLE", "1733050002.abcd"
	v["state"] = map[string]any{"values": map[string]any{
		slack.MessageBlock: map[string]any{slack.MessageAction: map[string]any{"type": "plain_text_input", "value": message}},
	}}
	return map[string]any{
		"type":       "view_submission",
		"team":       map[string]any{"id": "T0PRICKLE", "domain": "prickle"},
		"user":       map[string]any{"id": user, "username": strings.ToLower(user), "name": strings.ToLower(user), "team_id": "T0PRICKLE"},
		"api_app_id": "A0PRICKLE", "token": "verification-token-deprecated",
		"trigger_id":    "13345224609.738474920.8088930838d88f008e1",
		"view":          v,
		"response_urls": []any{}, "is_enterprise_install": false, "enterprise": nil,
	}
}

// editSubmission is Slack's view_submission payload for the Edit modal: the
// edited call typed in its block (slack.CommandBlock or InputBlock), and a message.
func editSubmission(user string, view json.RawMessage, block, edited, message string) map[string]any {
	p := viewSubmission(user, view, message)
	values := p["view"].(map[string]any)["state"].(map[string]any)["values"].(map[string]any)
	values[block] = map[string]any{slack.EditAction: map[string]any{"type": "plain_text_input", "value": edited}}
	return p
}

// formBody is Slack's body: application/x-www-form-urlencoded with the JSON in "payload".
func formBody(payload any) []byte {
	raw, err := json.Marshal(payload)
	if err != nil {
		panic(err)
	}
	return []byte("payload=" + url.QueryEscape(string(raw)))
}

type answer struct {
	status int
	body   string
}

// post sends body signed as Slack signs it at the given time; sign lets a case forge or omit headers.
func (h *harness) post(body []byte, at time.Time, sign func(ts string, body []byte) string) answer {
	h.t.Helper()
	req, err := http.NewRequest(http.MethodPost, h.srv.URL+slack.Path, strings.NewReader(string(body)))
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	ts := strconv.FormatInt(at.Unix(), 10)
	req.Header.Set(slack.HeaderTimestamp, ts)
	if sig := sign(ts, body); sig != "" {
		req.Header.Set(slack.HeaderSignature, sig)
	}
	return h.send(req)
}

func (h *harness) send(req *http.Request) answer {
	h.t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, string(b)}
}

func signed(ts string, body []byte) string { return slack.Sign(secret, ts, body) }

// click posts a signed, fresh interaction as Slack would.
func (h *harness) click(payload any) answer {
	h.t.Helper()
	return h.post(formBody(payload), h.clock, signed)
}

// memory is the in-memory backend's owners and replay markers.
type memory struct {
	mu     sync.Mutex
	owners map[string]team.Owner
	seen   map[string]bool
}

func (m *memory) Owner(_ context.Context, name string) (team.Owner, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if o, ok := m.owners[name]; ok {
		return o, nil
	}
	return team.Owner{}, team.ErrNotFound
}

func (m *memory) FirstSlackRequest(_ context.Context, id string, _ time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.seen[id] {
		return false, nil
	}
	m.seen[id] = true
	return true, nil
}

// ledger is notify's ledger in memory.
type ledger struct {
	mu   sync.Mutex
	sent map[string]bool
	refs map[string][2]string
}

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
