// Package step holds request_step's domain: a step is one exact call a woken
// run wants to make, waiting for its owner's decision. It is pure: no AWS, no MCP.
package step

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/useprickle/prickle/shared/kit/jsonlimit"
)

// Status is where a step stands; the values are the seed enum.
type Status string

// Step statuses.
const (
	Pending   Status = "pending"
	Approved  Status = "approved"
	Refused   Status = "refused"
	Expired   Status = "expired"
	Withdrawn Status = "withdrawn"
	Consumed  Status = "consumed"
)

// Step is one exact call asked of an owner.
type Step struct {
	ID          string          `json:"step_id"`
	TaskID      string          `json:"task_id"`
	Project     string          `json:"project"`
	Agent       string          `json:"agent"`
	RunID       string          `json:"run_id"`
	ToolName    string          `json:"tool_name"`
	Input       json.RawMessage `json:"input"`
	Fingerprint string          `json:"fingerprint"`
	// Edited is the call as the owner edited it before approving it
	// (canonical JSON; see edit.go), empty when approved as asked. Input
	// and Fingerprint stay the call as asked.
	Edited    json.RawMessage `json:"edited_input,omitempty"`
	Kind      string          `json:"kind,omitempty"`
	Target    string          `json:"target,omitempty"`
	Amount    *Amount         `json:"amount,omitempty"`
	Reason    string          `json:"reason,omitempty"`
	Status    Status          `json:"status"`
	Message   string          `json:"message,omitempty"`
	DecidedBy string          `json:"decided_by,omitempty"`
	DecidedAt *time.Time      `json:"decided_at,omitempty"`
	// DecidedVia is how the owner decided: an approval link, the task page, Slack, the admin CLI.
	DecidedVia string `json:"decided_via,omitempty"`
	// AllowedBy names what allowed the step without asking: "grant <id>" or
	// "budget <unit>"; empty when the owner decided it (or nobody has yet).
	AllowedBy string `json:"allowed_by,omitempty"`
	// BudgetNote says what the owner's budget leaves, for a spending step it did not cover.
	BudgetNote string    `json:"budget_note,omitempty"`
	CreatedAt  time.Time `json:"created_at"`
	// ExpiresAt is when the step stops being usable: the pending deadline,
	// then 15 minutes after approval. The store's TTL attribute follows it.
	ExpiresAt time.Time `json:"expires_at"`
}

// Canonical returns input as canonical JSON (sorted keys, no insignificant
// space, numbers exactly as written, no HTML escaping) so that the same call
// always has the same bytes, and the owner reads && and <, not \u0026 and \u003c.
func Canonical(input json.RawMessage) ([]byte, error) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("step input is not JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("step input is not one JSON value: something follows it")
	}
	// encoding/json sorts map keys and writes no extra space.
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("canonical step input: %w", err)
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n")), nil
}

// Fingerprint identifies a call within a task: same tool and same canonical
// input, descriptive fields aside (see Identity), give the same fingerprint.
func Fingerprint(taskID, toolName string, canonicalInput []byte) string {
	h := sha256.New()
	for _, part := range [][]byte{[]byte(taskID), []byte(toolName), Identity(toolName, canonicalInput)} {
		fmt.Fprintf(h, "%d:", len(part))
		h.Write(part)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Live reports whether the step still answers the same call: a refused step
// keeps refusing; consumed, withdrawn and expired ones are history.
func (s Step) Live() bool {
	return s.Status == Pending || s.Status == Approved || s.Status == Refused
}

// Bounds of a step's input, server rules beyond the seed schema: the input
// is stored, answered back and shown to its owner, so it must stay small.
const (
	// MaxInputDepth is how deep an input may nest; the input object is level 1.
	MaxInputDepth = 32
	// MaxInputElements is how many keys and array elements an input may hold in all.
	MaxInputElements = 1000
	// MaxInputBytes is the largest input as canonical JSON (64 KiB).
	MaxInputBytes = 64 << 10
)

// InputLimitError says a step's input crossed one of its bounds, naming it.
type InputLimitError struct {
	// Limit is jsonlimit.Depth, jsonlimit.Elements or "size".
	Limit string
	Max   int
	// Size is the canonical size of an input over MaxInputBytes.
	Size int
}

func (e *InputLimitError) Error() string {
	switch e.Limit {
	case jsonlimit.Depth:
		return fmt.Sprintf("input nests deeper than %d levels: the limit of a step's input depth is %d (the input object is level 1)", e.Max, e.Max)
	case jsonlimit.Elements:
		return fmt.Sprintf("input holds more than %d keys and array elements in all: the limit of a step's input is %d", e.Max, e.Max)
	}
	return fmt.Sprintf("input is %d bytes as canonical JSON: the limit of a step's input size is %d bytes (64 KiB)", e.Size, e.Max)
}

// CheckInput bounds a step's input (depth, keys and elements, canonical
// size) in one streaming pass before anything else reads it, checks it is
// a JSON object, and returns its canonical JSON; a crossed bound is an
// *InputLimitError.
func CheckInput(input json.RawMessage) ([]byte, error) {
	if err := jsonlimit.Check(input, MaxInputDepth, MaxInputElements); err != nil {
		var le *jsonlimit.Error
		if errors.As(err, &le) {
			return nil, &InputLimitError{Limit: le.Kind, Max: le.Max}
		}
		return nil, fmt.Errorf("step input is not JSON: %w", err)
	}
	canonical, err := Canonical(input)
	if err != nil {
		return nil, err
	}
	if canonical[0] != '{' {
		return nil, fmt.Errorf("step input is not a JSON object: a call's input is an object of its arguments")
	}
	if len(canonical) > MaxInputBytes {
		return nil, &InputLimitError{Limit: "size", Max: MaxInputBytes, Size: len(canonical)}
	}
	return canonical, nil
}
