// Package localjson is the local stack's local.json, defined once: infra/dev/local
// writes it, and the RIE harness and the operator CLI's --local read it.
package localjson

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

// State is .prickle/local.json: what a developer or a test needs to talk to
// the running stack. It holds live tokens, so it is written 0600.
type State struct {
	MCPURL           string            `json:"mcp_url"`
	Tokens           map[string]string `json:"tokens"`
	DynamoDBEndpoint string            `json:"dynamodb_endpoint"`
	Tables           map[string]string `json:"tables"`
	// SlackInteractivityURL and SlackSigningSecret let a test sign requests as Slack does.
	SlackInteractivityURL string `json:"slack_interactivity_url"`
	SlackSigningSecret    string `json:"slack_signing_secret"`
	// LoseAnswers and FaultTotalsURL are set on a fault run (PRICKLE_LOSE_ANSWERS=N): the
	// stack talks to the emulator through a proxy losing one write's answer in N, whose
	// counts (storetest.Totals) FaultTotalsURL answers.
	LoseAnswers    int    `json:"lose_answers,omitempty"`
	FaultTotalsURL string `json:"fault_totals_url,omitempty"`
}

// Write replaces the file at path atomically, readable by its owner only.
func (s State) Write(path string) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Chmod(tmp, 0o600); err != nil {
		return fmt.Errorf("chmod %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// Read reads a previous run's local.json; a missing file is no error.
func Read(path string) (State, error) {
	var s State
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("read %s: %w", path, err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("parse %s: %w", path, err)
	}
	return s, nil
}
