package slack

import (
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/useprickle/prickle/shared/auth/link"
	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/owners/notify"
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
	return map[string]any{
		"type":             "modal",
		"callback_id":      CallbackRefuse,
		"private_metadata": token,
		"title":            plain("Refuse"),
		"submit":           plain("Refuse"),
		"close":            plain("Cancel"),
		"blocks": []any{
			map[string]any{"type": "section", "text": plain(fmt.Sprintf("Refuse %s? The agent gets your message with the refusal.", what))},
			messageInput("Why not, and what to do instead"),
		},
	}
}

// The Edit modal: its callback id, and the input that holds the edited call:
// the command line of a shell tool (step.CommandFields), else the whole
// input as JSON.
const (
	CallbackEdit = "prickle_edit"
	CommandBlock = "edit_command"
	InputBlock   = "edit_input"
	EditAction   = "edit"
)

// MaxEditField is the most a plain_text_input of a modal holds (Slack's
// max_length and initial_value limit): a longer call is edited on the page.
const MaxEditField = 3000

// editModal shows the call a pending step asks, ready to edit, then approve;
// private_metadata carries the signed token, as the Refuse modal's does. ok
// is false when the call is longer than a Slack field holds.
func editModal(c link.Claims, token string, s step.Step) (view map[string]any, ok bool) {
	block, label, value := InputBlock, "Input (a JSON object)", notify.PrettyInput(s.Input, notify.InputPageMax)
	if cmd, isCmd := step.Command(s.ToolName, s.Input); isCmd {
		block, label, value = CommandBlock, "Command", cmd
	}
	if utf8.RuneCountInString(value) > MaxEditField {
		return nil, false
	}
	return map[string]any{
		"type":             "modal",
		"callback_id":      CallbackEdit,
		"private_metadata": token,
		"title":            plain("Edit, then approve"),
		"submit":           plain("Approve the edit"),
		"close":            plain("Cancel"),
		"blocks": []any{
			map[string]any{"type": "section", "text": plain(fmt.Sprintf("Edit the %s call of step %s of task %s, then approve it: the run may make your edited call instead of the one it asked, once, within %d minutes.",
				s.ToolName, c.StepID, c.TaskID, int(step.UseWindow/time.Minute)))},
			map[string]any{
				"type": "input", "block_id": block, "label": plain(label),
				"element": map[string]any{
					"type": "plain_text_input", "action_id": EditAction, "multiline": true, "max_length": MaxEditField, "initial_value": value,
				},
			},
			messageInput("Why you changed it"),
		},
	}, true
}

// messageInput is a modal's optional field for the owner's message to the agent.
func messageInput(placeholder string) map[string]any {
	return map[string]any{
		"type": "input", "block_id": MessageBlock, "optional": true,
		"label": plain("Message to the agent"),
		"element": map[string]any{
			"type": "plain_text_input", "action_id": MessageAction, "multiline": true, "max_length": MaxMessage,
			"placeholder": plain(placeholder),
		},
	}
}

// plain is a plain_text object: Slack shows it as it is.
func plain(s string) map[string]any { return map[string]any{"type": "plain_text", "text": s} }
