package slack

import (
	"fmt"

	"github.com/useprickle/prickle/shared/auth/link"
)

// The Refuse modal: its callback id, and the input that holds the owner's message.
const (
	CallbackRefuse = "prickle_refuse"
	MessageBlock   = "message"
	MessageAction  = "message"
)

// refuseModal asks for the owner's message; private_metadata carries the
// signed token, so the submission is authorised exactly as the click was.
// Its text is plain, like the messages' (notify's Block Kit builders).
func refuseModal(c link.Claims, token string) map[string]any {
	what := fmt.Sprintf("step %s of task %s", c.StepID, c.TaskID)
	if c.Kind == link.KindResult {
		what = fmt.Sprintf("the result of task %s", c.TaskID)
	}
	text := func(s string) map[string]any { return map[string]any{"type": "plain_text", "text": s} }
	return map[string]any{
		"type":             "modal",
		"callback_id":      CallbackRefuse,
		"private_metadata": token,
		"title":            text("Refuse"),
		"submit":           text("Refuse"),
		"close":            text("Cancel"),
		"blocks": []any{
			map[string]any{"type": "section", "text": text(fmt.Sprintf("Refuse %s? The agent gets your message with the refusal.", what))},
			map[string]any{
				"type": "input", "block_id": MessageBlock, "optional": true,
				"label": text("Message to the agent"),
				"element": map[string]any{
					"type": "plain_text_input", "action_id": MessageAction, "multiline": true, "max_length": MaxMessage,
					"placeholder": text("Why not, and what to do instead"),
				},
			},
		},
	}
}
