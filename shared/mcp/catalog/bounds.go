package catalog

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/kit/jsonlimit"
)

// MaxArgumentDepth is how deep any tool's arguments may nest (the arguments
// object is level 1): a step's input at its own limit, one level down.
const MaxArgumentDepth = 1 + step.MaxInputDepth

// checkBounds applies the server's bounds beyond JSON Schema before the
// schema is evaluated: every tool's arguments nest at most MaxArgumentDepth
// levels (one streaming pass), request_step's input keeps within the
// step's depth, element and size limits, and its amount.value, as written,
// within step's amount bounds (0 to MaxAmount, AmountDecimals decimal
// places). Errors name the field and the limit. For request_step it returns
// the input's canonical JSON (step.CheckInput's), which the team service
// takes as checked.
func checkBounds(tool string, args json.RawMessage) (stepInput []byte, err error) {
	if err := jsonlimit.Check(args, MaxArgumentDepth, 0); err != nil {
		var le *jsonlimit.Error
		if !errors.As(err, &le) {
			return nil, fmt.Errorf("arguments are not JSON: %w", err)
		}
		if le.Member == "" {
			return nil, fmt.Errorf("arguments: nest deeper than %d levels, the limit of a tool's arguments", MaxArgumentDepth)
		}
		if tool == PermissionTool && le.Member == "input" {
			return nil, fmt.Errorf("/input: %w", &step.InputLimitError{Limit: jsonlimit.Depth, Max: step.MaxInputDepth})
		}
		return nil, fmt.Errorf("/%s: nests deeper than %d levels, the limit of a tool argument", le.Member, MaxArgumentDepth-1)
	}
	if tool != PermissionTool {
		return nil, nil
	}
	var a struct {
		Input  json.RawMessage `json:"input"`
		Amount json.RawMessage `json:"amount"`
	}
	if json.Unmarshal(args, &a) != nil {
		return nil, nil // not an object: the schema names what is wrong
	}
	var amount struct {
		Value json.Number `json:"value"`
	}
	if json.Unmarshal(a.Amount, &amount) == nil && amount.Value != "" {
		if err := step.CheckAmountValue(string(amount.Value)); err != nil {
			return nil, fmt.Errorf("/amount/value: %w", err)
		}
	}
	if len(a.Input) == 0 || a.Input[0] != '{' {
		return nil, nil // no object: the schema names what is wrong
	}
	canonical, err := step.CheckInput(a.Input)
	if err != nil {
		return nil, fmt.Errorf("/input: %w", err)
	}
	return canonical, nil
}
