package step

import (
	"bytes"
	"encoding/json"
)

// DescriptiveFields are the input fields of well-known tools that only say
// why a call is made, never what it does: a model words them afresh each
// time it generates the call (Claude Code's Bash `description`, and the
// same field of Qwen Code's, Gemini CLI's, Copilot CLI's and opencode's shell tools). They are
// shown to the owner but are not part of the call's identity, so the same
// command reworded is the same step. A field that changes what runs (a
// command, a path, a timeout, run_in_background) never belongs here.
var DescriptiveFields = map[string][]string{
	"Bash": {"description"},
	// Qwen Code's and Gemini CLI's shell tool, and Copilot CLI's and opencode's.
	"run_shell_command": {"description"},
	"bash":              {"description"},
}

// Identity is what a step's fingerprint is taken over: the canonical input
// without its tool's descriptive fields. canonicalInput must be Canonical's
// output (an object, sorted keys); anything else is returned unchanged.
func Identity(toolName string, canonicalInput []byte) []byte {
	drop := DescriptiveFields[toolName]
	if len(drop) == 0 {
		return canonicalInput
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(canonicalInput, &fields); err != nil {
		return canonicalInput
	}
	n := len(fields)
	for _, f := range drop {
		delete(fields, f)
	}
	if len(fields) == n {
		return canonicalInput
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(fields); err != nil {
		return canonicalInput
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n"))
}
