package notify

import (
	"fmt"
	"time"
)

// The buttons of a request message in Slack: what each one does, carries and
// says.

// Action ids of the buttons of a request message; Slack sends them back in block_actions.
const (
	// ActionApprove approves at once; its value is the approval-link token.
	ActionApprove = "prickle_approve"
	// ActionRefuse opens a modal for the owner's message; its value is the approval-link token.
	ActionRefuse = "prickle_refuse"
	// ActionEdit opens a modal to edit a step's call, then approve the edited
	// call; its value is the approval-link token.
	ActionEdit = "prickle_edit"
	// ActionAllowCall approves a step and also allows the same call on its task
	// for AllowCallHours without asking (a standing grant); its value is the token.
	ActionAllowCall = "prickle_allow_call"
	// ActionOpenPage is the link button to the approval page (Slack reports its clicks too; they decide nothing).
	ActionOpenPage = "open_approval"
	// DecideBlockID names the actions block that holds the buttons.
	DecideBlockID = "prickle_decide"
)

// AllowCallHours is how long the grant of the ActionAllowCall button lasts;
// other lengths and pattern grants are given on the approval page.
const AllowCallHours = 8

// SlackValueMax is the longest value Slack accepts on a button.
const SlackValueMax = 2000

// decideActions is the row of buttons of a request: Approve and Refuse (and,
// for a step, Approve + allow this call for AllowCallHours, and Edit…) carry the signed token, so a
// click is authorised by the same signature, expiry and single-use decision
// as the web page; the last opens that page.
func decideActions(token, url string, step bool) map[string]any {
	button := func(text, actionID string) map[string]any {
		return map[string]any{"type": "button", "text": map[string]any{"type": "plain_text", "text": text}, "action_id": actionID}
	}
	approve := button("Approve", ActionApprove)
	approve["style"], approve["value"] = "primary", token
	refuse := button("Refuse…", ActionRefuse)
	refuse["style"], refuse["value"] = "danger", token
	page := button("Review on the page", ActionOpenPage)
	page["url"] = url
	elements := []any{approve, refuse, page}
	if step {
		allow := button(fmt.Sprintf("Approve + this call for %d h", AllowCallHours), ActionAllowCall)
		allow["value"] = token
		edit := button("Edit…", ActionEdit)
		edit["value"] = token
		elements = []any{approve, allow, edit, refuse, page}
	}
	if len(token) > SlackValueMax { // ids too long for a button: the page still decides
		elements = []any{page}
	}
	return map[string]any{"type": "actions", "block_id": DecideBlockID, "elements": elements}
}

func decideNote(owner string, expires time.Time) string {
	return fmt.Sprintf("Only %s can decide: with these buttons, or on the page (opening the link changes nothing). Works until %s; decided once.", owner, stamp(expires))
}
