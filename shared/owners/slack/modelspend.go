package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/useprickle/prickle/shared/auth/link"
	"github.com/useprickle/prickle/shared/domain/audit"
	"github.com/useprickle/prickle/shared/domain/modelspend"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/owners/notify"
)

func capButton(actionID string) bool {
	return actionID == notify.ActionCapRaise || actionID == notify.ActionCapLeave
}

// capAction carries out Raise or Leave on a cap-reached message: the token
// must be a cap link's (and a cap button's token nothing else), clicked by
// its owner (authorize checked that). Decided, the message is replaced by
// the outcome, so its buttons are gone; refused, the clicker is told why.
func (h *Handler) capAction(ctx context.Context, in Interaction, a Action, c link.Claims, o *outcome) {
	if !capButton(a.ActionID) || c.Kind != link.KindCap || h.cfg.Caps == nil {
		o.result = "wrong_button"
		h.ephemeral(ctx, in, "This button decided nothing: it does not belong to this message.")
		return
	}
	raise := a.ActionID == notify.ActionCapRaise
	st, err := h.cfg.Caps.Decide(ctx, c.Owner, c.Agent, c.Day, raise, audit.ViaSlack)
	var refusal *task.Refusal
	if errors.As(err, &refusal) {
		o.result = "refused_by_rules"
		h.ephemeral(ctx, in, "Nothing was decided: "+refusal.Msg+".")
		return
	}
	if err != nil {
		o.result = "error"
		h.cfg.Log.ErrorContext(ctx, "slack interaction: decide the cap", "agent", c.Agent, "error", err.Error())
		h.ephemeral(ctx, in, "Something went wrong; nothing was decided. Try again, or use the page.")
		return
	}
	text := fmt.Sprintf("%s's model-spend cap for %s left as it is by %s: new runs wait until 00:00 UTC.", c.Agent, c.Day, c.Owner)
	o.result = "left"
	if raise {
		o.result = "raised"
		text = fmt.Sprintf("%s's model-spend cap raised for %s to %s %s by %s: its waiting work starts now.", c.Agent, c.Day, st.Limit, modelspend.Unit, c.Owner)
	}
	if in.ResponseURL == "" {
		return
	}
	body, err := json.Marshal(map[string]any{"replace_original": true, "text": text})
	if err == nil {
		err = h.cfg.Slack.Respond(ctx, in.ResponseURL, body)
	}
	if err != nil {
		h.cfg.Log.ErrorContext(ctx, "slack interaction: the decided message was not replaced", "error", err.Error())
	}
}
