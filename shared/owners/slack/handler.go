package slack

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/useprickle/prickle/shared/auth/link"
	"github.com/useprickle/prickle/shared/domain/audit"
	"github.com/useprickle/prickle/shared/domain/grant"
	"github.com/useprickle/prickle/shared/domain/modelspend"
	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/owners/notify"
	"github.com/useprickle/prickle/shared/team"
)

// Path is where Slack's app sends interactions (its Request URL).
const Path = "/slack/interactivity"

// MaxBody is the largest request read: a block_actions payload carries the whole message.
const MaxBody = 1 << 20

// MaxMessage is the longest refusal message, as on the approval page.
const MaxMessage = 2000

// Owners finds an owner's Slack user id; *store.Store satisfies it.
type Owners interface {
	Owner(ctx context.Context, name string) (team.Owner, error)
}

// Decider records owners' decisions; *team.Service satisfies it.
type Decider interface {
	DecideStep(ctx context.Context, owner, taskID, stepID string, approve bool, edited json.RawMessage, message, via string) (step.Step, error)
	DecideResult(ctx context.Context, owner, taskID, round string, approve bool, message, via string) (task.Task, error)
	GrantFromStep(ctx context.Context, owner, taskID, stepID string, r team.GrantRequest) (grant.Grant, error)
}

// Steps reads a pending step, to show its call in the Edit modal; *store.Store satisfies it.
type Steps interface {
	Step(ctx context.Context, taskID, stepID string) (step.Step, error)
}

// Slack is what the endpoint asks of Slack: open the Refuse and Edit modals and answer
// through an interaction's response_url. The Web API client in the cloud, the
// dev outbox locally.
type Slack interface {
	OpenView(ctx context.Context, triggerID string, view json.RawMessage) error
	Respond(ctx context.Context, responseURL string, body json.RawMessage) error
}

// Caps decides owners' model-spend caps reached; *team.ModelSpend satisfies it.
type Caps interface {
	Decide(ctx context.Context, owner, agent, day string, raise bool, via string) (modelspend.Status, error)
}

// Config is what the handler needs. An empty Secret turns the endpoint off (404).
type Config struct {
	Secret  []byte
	Replays Replays
	Signer  link.Signer
	Owners  Owners
	Steps   Steps
	Decider Decider
	Caps    Caps
	Slack   Slack
	Now     func() time.Time
	Log     *slog.Logger
}

// Handler serves Path.
type Handler struct {
	cfg Config
}

// New builds the handler; a nil clock is the real one, a nil logger slog's default.
// (Alike runnerapi.New's defaults on purpose: each package fills in its own Config.)
func New(cfg Config) *Handler {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	return &Handler{cfg: cfg}
}

// outcome is what one request came to, for its log line.
type outcome struct {
	kind, action, task, step, user, result string
}

// ServeHTTP verifies the request, then acts on it. Slack wants an answer
// within 3 seconds: an empty 200 once handled (ephemeral answers go through
// the response_url), or a view_submission's response_action.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	var o outcome
	start := h.cfg.Now()
	defer func() {
		h.cfg.Log.InfoContext(ctx, "slack interaction", "type", o.kind, "action", o.action, "task", o.task, "step", o.step,
			"slack_user", o.user, "outcome", o.result, "ms", h.cfg.Now().Sub(start).Milliseconds())
	}()
	if r.Method != http.MethodPost {
		o.result = "method"
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	if len(h.cfg.Secret) == 0 {
		o.result = "off"
		http.Error(w, "Slack interactivity is not configured", http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	if err != nil {
		o.result = "too_large"
		http.Error(w, "request too large", http.StatusRequestEntityTooLarge)
		return
	}
	ts, sig := r.Header.Get(HeaderTimestamp), r.Header.Get(HeaderSignature)
	if err := Verify(h.cfg.Secret, ts, sig, body, h.cfg.Now()); err != nil {
		o.result = "unverified"
		h.cfg.Log.WarnContext(ctx, "slack request refused", "reason", err.Error())
		http.Error(w, "request not verified", http.StatusUnauthorized)
		return
	}
	first, err := h.cfg.Replays.FirstSlackRequest(ctx, replayID(ts, sig), h.cfg.Now())
	if err != nil {
		o.result = "error"
		h.cfg.Log.ErrorContext(ctx, "slack request: replay check failed", "error", err.Error())
		http.Error(w, "try again", http.StatusInternalServerError)
		return
	}
	if !first {
		o.result = "replayed"
		h.cfg.Log.WarnContext(ctx, "slack request refused", "reason", ErrReplayed.Error())
		http.Error(w, "request not verified", http.StatusUnauthorized)
		return
	}
	in, err := Parse(body)
	if err != nil {
		o.result = "bad_payload"
		http.Error(w, "no interaction payload", http.StatusBadRequest)
		return
	}
	o.kind, o.user = in.Type, in.User.ID
	switch in.Type {
	case TypeBlockActions:
		h.blockActions(ctx, in, &o)
		w.WriteHeader(http.StatusOK)
	case TypeViewSubmission:
		h.viewSubmission(ctx, w, in, &o)
	default:
		o.result = "ignored"
		w.WriteHeader(http.StatusOK)
	}
}

// button finds the Approve, Refuse, Approve + this call, Edit or cap (Raise / Leave) action of a block_actions payload.
func button(in Interaction) (Action, bool) {
	for _, a := range in.Actions {
		switch a.ActionID {
		case notify.ActionApprove, notify.ActionRefuse, notify.ActionAllowCall, notify.ActionEdit, notify.ActionCapRaise, notify.ActionCapLeave:
			return a, true
		}
	}
	return Action{}, false
}

func (h *Handler) blockActions(ctx context.Context, in Interaction, o *outcome) {
	a, ok := button(in)
	if !ok {
		o.result = "ignored" // the page's link button, or another app's element
		return
	}
	o.action = a.ActionID
	c, why, ok := h.authorize(ctx, a.Value, in.User.ID, o)
	if !ok {
		h.ephemeral(ctx, in, why)
		return
	}
	if capButton(a.ActionID) || c.Kind == link.KindCap {
		h.capAction(ctx, in, a, c, o)
		return
	}
	if a.ActionID == notify.ActionEdit {
		h.openEdit(ctx, in, c, a.Value, o)
		return
	}
	if a.ActionID == notify.ActionRefuse {
		h.openModal(ctx, in, o, refuseModal(c, a.Value), "Refuse")
		return
	}
	msg, err := h.decide(ctx, c, true, nil, "")
	if err == nil && msg == "" && a.ActionID == notify.ActionAllowCall && c.Kind == link.KindStep {
		_, err = h.cfg.Decider.GrantFromStep(ctx, c.Owner, c.TaskID, c.StepID, team.GrantRequest{Scope: grant.ScopeCall, Hours: notify.AllowCallHours, Via: audit.ViaSlack})
		var refusal *task.Refusal
		if errors.As(err, &refusal) {
			msg, err = "Approved, but the grant was not saved: "+refusal.Msg+".", nil
		}
	}
	if err != nil {
		o.result = "error"
		h.cfg.Log.ErrorContext(ctx, "slack interaction: decide", "task", c.TaskID, "error", err.Error())
		h.ephemeral(ctx, in, "Something went wrong; nothing was decided. Try again, or use the page.")
		return
	}
	if msg != "" {
		o.result = "refused_by_rules"
		h.ephemeral(ctx, in, msg)
		return
	}
	o.result = "approved" // notify edits the message in place on the decision's event
}

func (h *Handler) viewSubmission(ctx context.Context, w http.ResponseWriter, in Interaction, o *outcome) {
	if in.View == nil || (in.View.CallbackID != CallbackRefuse && in.View.CallbackID != CallbackEdit) {
		o.result = "ignored"
		w.WriteHeader(http.StatusOK)
		return
	}
	o.action = in.View.CallbackID
	// Errors show under the field the owner typed in: the edit, or the message.
	field := MessageBlock
	if in.View.CallbackID == CallbackEdit {
		field = InputBlock
		if _, ok := in.View.State.Values[CommandBlock]; ok {
			field = CommandBlock
		}
	}
	c, why, ok := h.authorize(ctx, in.View.PrivateMetadata, in.User.ID, o)
	if !ok {
		modalError(w, field, why)
		return
	}
	msg := strings.TrimSpace(in.View.Value(MessageBlock, MessageAction))
	if utf8.RuneCountInString(msg) > MaxMessage {
		o.result = "too_long"
		modalError(w, MessageBlock, fmt.Sprintf("The message is longer than %d characters.", MaxMessage))
		return
	}
	var edited json.RawMessage
	if in.View.CallbackID == CallbackEdit {
		var why string
		if edited, why = h.editOf(ctx, c, in.View, field); why != "" {
			o.result = "bad_edit"
			modalError(w, field, why)
			return
		}
	}
	refusal, err := h.decide(ctx, c, in.View.CallbackID == CallbackEdit, edited, msg)
	if err != nil {
		o.result = "error"
		h.cfg.Log.ErrorContext(ctx, "slack interaction: decide", "task", c.TaskID, "error", err.Error())
		modalError(w, field, "Something went wrong; nothing was decided. Try again, or use the page.")
		return
	}
	if refusal != "" {
		o.result = "refused_by_rules"
		modalError(w, field, refusal)
		return
	}
	o.result = map[bool]string{true: "approved_edited", false: "refused"}[edited != nil]
	w.WriteHeader(http.StatusOK) // an empty 200 closes the modal
}

// openModal opens a modal (form: "Refuse", "Edit") for the user who
// clicked, or tells them it could not and that the page still decides.
func (h *Handler) openModal(ctx context.Context, in Interaction, o *outcome, modal any, form string) {
	view, err := json.Marshal(modal)
	if err == nil {
		err = h.cfg.Slack.OpenView(ctx, in.TriggerID, view)
	}
	if err != nil {
		o.result = "error"
		verb := strings.ToLower(form)
		h.cfg.Log.ErrorContext(ctx, "slack interaction: open the "+verb+" modal", "error", err.Error())
		h.ephemeral(ctx, in, "The "+form+" form could not be opened; nothing was decided. Try again, or "+verb+" on the page.")
		return
	}
	o.result = "modal_opened"
}

// ephemeral answers only the user who clicked, leaving the message as it is.
func (h *Handler) ephemeral(ctx context.Context, in Interaction, text string) {
	if in.ResponseURL == "" {
		return
	}
	body, err := json.Marshal(map[string]any{"response_type": "ephemeral", "replace_original": false, "text": text})
	if err == nil {
		err = h.cfg.Slack.Respond(ctx, in.ResponseURL, body)
	}
	if err != nil {
		h.cfg.Log.ErrorContext(ctx, "slack interaction: ephemeral answer not sent", "error", err.Error())
	}
}

// modalError keeps the modal open with text under its input block.
func modalError(w http.ResponseWriter, block, text string) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(map[string]any{"response_action": "errors", "errors": map[string]string{block: text}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b.Bytes())
}
