package web

import (
	"encoding/json"
	"fmt"

	"github.com/useprickle/prickle/shared/mcp/catalog"
)

// toolInput is what a board form asks of an agent tool (hand_off_task,
// review_result), checked against that tool's input schema as an agent's
// call is, and decoded into the team service's input. why is the owner's
// to fix (the schema's message); err is Prickle's.
func toolInput[T any](tool string, args map[string]any) (in T, why string, err error) {
	raw, err := json.Marshal(args)
	if err != nil {
		return in, "", fmt.Errorf("web: %s arguments: %w", tool, err)
	}
	t, ok := catalog.Lookup(tool)
	if !ok {
		return in, "", fmt.Errorf("web: no tool %s in the catalog", tool)
	}
	if err := t.ValidateInput(raw); err != nil {
		return in, "invalid arguments for " + tool + ": " + err.Error(), nil
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return in, "", fmt.Errorf("web: %s arguments: %w", tool, err)
	}
	return in, "", nil
}
