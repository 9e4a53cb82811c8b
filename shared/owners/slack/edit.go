package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/useprickle/prickle/shared/auth/link"
	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/team"
)

// The Edit modal: a pending step's call opened for the owner to edit, and
// the edited call read back from its submission.

// openEdit opens the Edit modal of a pending step's call, or tells the
// owner why it cannot be edited here.
func (h *Handler) openEdit(ctx context.Context, in Interaction, c link.Claims, token string, o *outcome) {
	if c.Kind != link.KindStep {
		o.result = "bad_edit"
		h.ephemeral(ctx, in, "Only a step's call can be edited; nothing was decided.")
		return
	}
	st, err := h.cfg.Steps.Step(ctx, c.TaskID, c.StepID)
	if errors.Is(err, team.ErrNotFound) {
		o.result = "not_found"
		h.ephemeral(ctx, in, "This step no longer exists; nothing was decided.")
		return
	}
	if err != nil {
		o.result = "error"
		h.cfg.Log.ErrorContext(ctx, "slack interaction: load the step to edit", "task", c.TaskID, "step", c.StepID, "error", err.Error())
		h.ephemeral(ctx, in, "Something went wrong; nothing was decided. Try again, or use the page.")
		return
	}
	if eff := st.Effective(h.cfg.Now()); eff.Status != step.Pending {
		o.result = "refused_by_rules"
		h.ephemeral(ctx, in, "Nothing was decided: "+team.AlreadyDecided(eff).Msg+".")
		return
	}
	modal, ok := editModal(c, token, st)
	if !ok {
		o.result = "too_long"
		h.ephemeral(ctx, in, fmt.Sprintf("This call is longer than a Slack field holds (%d characters): edit it on the page (Review on the page). Nothing was decided.", MaxEditField))
		return
	}
	h.openModal(ctx, in, o, modal, "Edit")
}

// editOf is the edited call of an Edit modal's submission: the whole input
// (JSON), or the step's input with its command line replaced; why says what
// is wrong with it. The team service bounds it and decides.
func (h *Handler) editOf(ctx context.Context, c link.Claims, v *View, field string) (json.RawMessage, string) {
	if c.Kind != link.KindStep {
		return nil, "Only a step's call can be edited; nothing was decided."
	}
	value := v.Value(field, EditAction)
	if field == InputBlock {
		return json.RawMessage(value), ""
	}
	st, err := h.cfg.Steps.Step(ctx, c.TaskID, c.StepID)
	if err != nil {
		return nil, "This step could not be read; nothing was decided. Try again, or edit on the page."
	}
	edited, err := step.WithCommand(st.ToolName, st.Input, value)
	if err != nil {
		return nil, "Nothing was decided: " + err.Error() + "."
	}
	return edited, ""
}
