package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

// localState is .prickle/local.json: what a developer or a test needs to
// talk to the running stack. It holds live tokens, so it is written 0600.
type localState struct {
	MCPURL           string            `json:"mcp_url"`
	Tokens           map[string]string `json:"tokens"`
	DynamoDBEndpoint string            `json:"dynamodb_endpoint"`
	Tables           map[string]string `json:"tables"`
	// SlackInteractivityURL and SlackSigningSecret let a test sign requests as Slack does.
	SlackInteractivityURL string `json:"slack_interactivity_url"`
	SlackSigningSecret    string `json:"slack_signing_secret"`
}

func (s localState) write(path string) error {
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

// readState reads a previous run's local.json; a missing file is no error.
func readState(path string) (localState, error) {
	var s localState
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
