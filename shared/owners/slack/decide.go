package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/useprickle/prickle/shared/auth/link"
	"github.com/useprickle/prickle/shared/domain/audit"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/team"
)

// Who may decide from Slack (the signed token and its owner's Slack user),
// and the decision recorded through the team service.

// authorize checks the token and that user is its owner's Slack user; it
// returns what to tell the user when not.
func (h *Handler) authorize(ctx context.Context, token, user string, o *outcome) (link.Claims, string, bool) {
	c, err := h.cfg.Signer.Verify(token, h.cfg.Now())
	switch {
	case errors.Is(err, link.ErrExpired):
		o.task, o.step, o.result = c.TaskID, c.StepID, "expired"
		return c, fmt.Sprintf("This request expired at %s; nothing was decided. If the agent still needs an answer it will ask again.", c.Expires.UTC().Format(time.RFC3339)), false
	case err != nil:
		o.result = "tampered"
		return c, "This button is not valid (it was changed or not issued by Prickle), so it decided nothing.", false
	}
	o.task, o.step = c.TaskID, c.StepID
	owner, err := h.cfg.Owners.Owner(ctx, c.Owner)
	if err != nil && !errors.Is(err, team.ErrNotFound) {
		o.result = "error"
		h.cfg.Log.ErrorContext(ctx, "slack interaction: load owner", "owner", c.Owner, "error", err.Error())
		return c, "Something went wrong; nothing was decided. Try again, or use the page.", false
	}
	if owner.SlackUserID == "" || owner.SlackUserID != user {
		o.result = "not_owner"
		return c, fmt.Sprintf("Only %s can decide this. Your click decided nothing.", c.Owner), false
	}
	return c, "", true
}

// decide records the owner's decision (with edited, the approval of the
// call as the owner edited it); a decision the rules refuse (already
// decided, expired, no longer waiting, an edit out of bounds) comes back as
// its message, not an error.
func (h *Handler) decide(ctx context.Context, c link.Claims, approve bool, edited json.RawMessage, msg string) (string, error) {
	var err error
	switch c.Kind {
	case link.KindCap:
		return "Nothing was decided: a model-spend cap is raised or left with its own buttons.", nil
	case link.KindStep:
		_, err = h.cfg.Decider.DecideStep(ctx, c.Owner, c.TaskID, c.StepID, approve, edited, msg, audit.ViaSlack)
	default:
		_, err = h.cfg.Decider.DecideResult(ctx, c.Owner, c.TaskID, c.Round, approve, msg, audit.ViaSlack)
	}
	var refusal *task.Refusal
	if errors.As(err, &refusal) {
		return "Nothing was decided: " + refusal.Msg + ".", nil
	}
	if err != nil {
		return "", fmt.Errorf("decide %s %s/%s: %w", c.Kind, c.TaskID, c.StepID, err)
	}
	return "", nil
}
