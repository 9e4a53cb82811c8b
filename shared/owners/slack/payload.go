package slack

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
)

// Interaction types Prickle handles.
const (
	TypeBlockActions   = "block_actions"
	TypeViewSubmission = "view_submission"
)

// Interaction is the part of Slack's interaction payload Prickle reads
// (the form field "payload" of an application/x-www-form-urlencoded POST).
type Interaction struct {
	Type        string   `json:"type"`
	User        User     `json:"user"`
	Team        Team     `json:"team"`
	TriggerID   string   `json:"trigger_id"`
	ResponseURL string   `json:"response_url"`
	Actions     []Action `json:"actions"`
	View        *View    `json:"view"`
}

// User is who clicked or submitted.
type User struct {
	ID       string `json:"id"`
	Username string `json:"username"`
	TeamID   string `json:"team_id"`
}

// Team is the workspace the request came from.
type Team struct {
	ID     string `json:"id"`
	Domain string `json:"domain"`
}

// Action is one pressed button of a block_actions payload.
type Action struct {
	Type     string `json:"type"`
	ActionID string `json:"action_id"`
	BlockID  string `json:"block_id"`
	Value    string `json:"value"`
	ActionTS string `json:"action_ts"`
}

// View is a submitted modal of a view_submission payload.
type View struct {
	ID              string `json:"id"`
	CallbackID      string `json:"callback_id"`
	PrivateMetadata string `json:"private_metadata"`
	State           struct {
		Values map[string]map[string]InputValue `json:"values"`
	} `json:"state"`
}

// InputValue is what an input element holds when the modal is submitted.
type InputValue struct {
	Type  string  `json:"type"`
	Value *string `json:"value"`
}

// Value returns the value of the input element actionID in block blockID, "" when empty or absent.
func (v *View) Value(blockID, actionID string) string {
	if v == nil {
		return ""
	}
	if in, ok := v.State.Values[blockID][actionID]; ok && in.Value != nil {
		return *in.Value
	}
	return ""
}

// ErrNoPayload means the body is not a form with a JSON payload field.
var ErrNoPayload = errors.New("slack request: no payload")

// Parse reads an interaction from the raw body of Slack's POST.
func Parse(body []byte) (Interaction, error) {
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return Interaction{}, fmt.Errorf("%w: %v", ErrNoPayload, err)
	}
	raw := form.Get("payload")
	if raw == "" {
		return Interaction{}, ErrNoPayload
	}
	var in Interaction
	if err := json.Unmarshal([]byte(raw), &in); err != nil {
		return Interaction{}, fmt.Errorf("%w: not JSON: %v", ErrNoPayload, err)
	}
	if in.Type == "" {
		return Interaction{}, fmt.Errorf("%w: no type", ErrNoPayload)
	}
	return in, nil
}
