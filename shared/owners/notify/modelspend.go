package notify

import (
	"context"
	"fmt"
	"strings"

	"github.com/useprickle/prickle/shared/auth/link"
	"github.com/useprickle/prickle/shared/domain/event"
	"github.com/useprickle/prickle/shared/domain/modelspend"
)

// Action ids of the buttons of a cap-reached message; each carries the
// signed cap link's token, like Approve and Refuse.
const (
	// ActionCapRaise raises the agent's cap for the rest of the day.
	ActionCapRaise = "prickle_cap_raise"
	// ActionCapLeave leaves it: the agent's work waits until the next UTC day.
	ActionCapLeave = "prickle_cap_leave"
)

// capReached asks the owner, once per agent per day (the event's id names
// both), whether to raise the agent's daily model-spend cap: by email with
// the link's page, and in Slack with Raise / Leave buttons. Each destination
// gets its own link, signed with where it went, valid until the day ends.
func (n *Notifier) capReached(ctx context.Context, e event.Event) error {
	if e.Cap == nil {
		return fmt.Errorf("notify %s: the event carries no cap", e.ID)
	}
	r := *e.Cap
	o, ok, err := n.owner(ctx, e, r.Owner)
	if !ok {
		return err
	}
	claims := link.ForCap(r.Agent, r.Day, o.Name, modelspend.NextDay(e.At))
	return n.ask(ctx, e, o, claims, "CAP#"+r.Agent, r.Day, func(token string) message {
		return capReachedMessage(r, token, link.CapURL(n.BaseURL, token))
	})
}

// capReachedMessage is the ask: "alice/writer reached 20 USD of model spend
// today; raise the cap for today / leave it", with the page and the buttons.
func capReachedMessage(r modelspend.Reached, token, url string) message {
	subject := r.Headline()
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n", r.Question())
	fmt.Fprintf(&b, "Decide here (opening the link changes nothing; only the button on the page decides):\n%s\n\n", url)
	fmt.Fprintf(&b, "The link works until the UTC day ends, and the day is decided once.\n")
	button := func(text, actionID string) map[string]any {
		return map[string]any{"type": "button", "text": map[string]any{"type": "plain_text", "text": text}, "action_id": actionID, "value": token}
	}
	raise := button(fmt.Sprintf("Raise to %s %s for today", r.Raise, modelspend.Unit), ActionCapRaise)
	raise["style"] = "primary"
	page := map[string]any{"type": "button", "text": map[string]any{"type": "plain_text", "text": "Decide on the page"}, "action_id": ActionOpenPage, "url": url}
	elements := []any{raise, button("Leave it", ActionCapLeave), page}
	if len(token) > SlackValueMax {
		elements = []any{page}
	}
	blocks := []any{
		header(subject),
		richText(paragraph(literal(r.Question()))),
		map[string]any{"type": "actions", "block_id": DecideBlockID, "elements": elements},
		contextBlock(fmt.Sprintf("Only %s can decide: with these buttons, or on the page. Works until the UTC day ends; decided once.", r.Owner)),
	}
	return message{subject: subject, text: b.String(), blocks: blocks, links: []string{url}}
}
