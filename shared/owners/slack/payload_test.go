package slack_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/useprickle/prickle/shared/owners/notify"
	"github.com/useprickle/prickle/shared/owners/slack"
)

func TestParse(t *testing.T) {
	view := mustJSON(map[string]any{"type": "modal", "callback_id": slack.CallbackRefuse, "private_metadata": "tok.sig"})
	t.Run("block_actions", func(t *testing.T) {
		in, err := slack.Parse(formBody(blockActions("U0ALICE", notify.ActionApprove, "tok.sig")))
		if err != nil {
			t.Fatal(err)
		}
		if in.Type != slack.TypeBlockActions || in.User.ID != "U0ALICE" || in.Team.ID != "T0PRICKLE" || in.ResponseURL != responseURL || in.TriggerID == "" {
			t.Errorf("interaction = %+v", in)
		}
		if len(in.Actions) != 1 || in.Actions[0].ActionID != notify.ActionApprove || in.Actions[0].Value != "tok.sig" || in.Actions[0].BlockID != notify.DecideBlockID {
			t.Errorf("actions = %+v", in.Actions)
		}
	})
	t.Run("view_submission", func(t *testing.T) {
		in, err := slack.Parse(formBody(viewSubmission("U0ALICE", view, "not now")))
		if err != nil {
			t.Fatal(err)
		}
		if in.Type != slack.TypeViewSubmission || in.View == nil || in.View.CallbackID != slack.CallbackRefuse || in.View.PrivateMetadata != "tok.sig" {
			t.Fatalf("interaction = %+v", in)
		}
		if got := in.View.Value(slack.MessageBlock, slack.MessageAction); got != "not now" {
			t.Errorf("message = %q", got)
		}
		if got := in.View.Value("other", slack.MessageAction); got != "" {
			t.Errorf("absent input = %q", got)
		}
	})
	t.Run("an empty optional input is null", func(t *testing.T) {
		p := viewSubmission("U0ALICE", view, "")
		p["view"].(map[string]any)["state"] = json.RawMessage(`{"values":{"message":{"message":{"type":"plain_text_input","value":null}}}}`)
		in, err := slack.Parse(formBody(p))
		if err != nil || in.View.Value(slack.MessageBlock, slack.MessageAction) != "" {
			t.Errorf("null input = %v, %v", in.View, err)
		}
	})
	for name, body := range map[string]string{
		"not a form":       "%zz",
		"no payload":       "token=abc&type=block_actions",
		"payload not JSON": "payload=%7Bnope",
		"no type":          "payload=%7B%7D",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := slack.Parse([]byte(body)); !errors.Is(err, slack.ErrNoPayload) {
				t.Errorf("Parse = %v, want ErrNoPayload", err)
			}
		})
	}
}
