// Package grant holds owners' standing grants: an owner's "yes" given once
// for calls a run will ask again, so that request_step answers allow at once
// instead of asking twenty times. A grant is narrow by construction: one
// agent, one project, one tool, and either one exact call on one task or a
// pattern over one field of the call's input, for a bounded number of hours.
// It is pure: no AWS, no MCP.
package grant

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Scope says what a grant covers.
type Scope string

// Grant scopes.
const (
	// ScopeCall allows the same call (tool and canonical input) on one task.
	ScopeCall Scope = "call"
	// ScopePattern allows calls of one tool whose input field matches a pattern,
	// by one agent in one project, on any of its tasks.
	ScopePattern Scope = "pattern"
)

// Limits on what an owner may grant: grants never outlive a working week.
const (
	MinHours = 1
	MaxHours = 72
	// MaxPattern is the longest pattern accepted, in characters.
	MaxPattern = 500
	// MaxField is the longest input field name accepted.
	MaxField = 64
)

// Grant is one standing permission an owner gave.
type Grant struct {
	ID      string `json:"grant_id"`
	Project string `json:"project"`
	Owner   string `json:"owner"`
	Agent   string `json:"agent"`
	Scope   Scope  `json:"scope"`
	// TaskID and Fingerprint name the exact call of a ScopeCall grant.
	TaskID      string `json:"task_id,omitempty"`
	Fingerprint string `json:"fingerprint,omitempty"`
	ToolName    string `json:"tool_name"`
	// Input is the canonical input of the exact call (ScopeCall), for people to read.
	Input json.RawMessage `json:"input,omitempty"`
	// Field and Pattern say which calls a ScopePattern grant allows.
	Field   string `json:"field,omitempty"`
	Pattern string `json:"pattern,omitempty"`
	// FromStep is the step the owner was deciding when they gave the grant.
	FromStep  string     `json:"from_step,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt time.Time  `json:"expires_at"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
	RevokedBy string     `json:"revoked_by,omitempty"`
	Uses      int        `json:"uses"`
}

// Call is what request_step asks: the caller, the task and the exact call.
type Call struct {
	Project, Agent, TaskID, ToolName string
	// Canonical is the canonical JSON of the input (step.Canonical).
	Canonical   []byte
	Fingerprint string
}

// Live reports whether the grant still allows anything at now.
func (g Grant) Live(now time.Time) bool {
	return g.RevokedAt == nil && now.Before(g.ExpiresAt)
}

// Status is how a person reads the grant at now: live, revoked or expired.
func (g Grant) Status(now time.Time) string {
	switch {
	case g.RevokedAt != nil:
		return "revoked"
	case !now.Before(g.ExpiresAt):
		return "expired"
	}
	return "live"
}

// Allows reports whether the live grant covers the call.
func (g Grant) Allows(c Call, now time.Time) bool {
	if !g.Live(now) || g.Project != c.Project || g.Agent != c.Agent || g.ToolName != c.ToolName {
		return false
	}
	switch g.Scope {
	case ScopeCall:
		return g.TaskID == c.TaskID && g.Fingerprint != "" && g.Fingerprint == c.Fingerprint
	case ScopePattern:
		v, ok := stringField(c.Canonical, g.Field)
		return ok && Match(g.Field, g.Pattern, v)
	}
	return false
}

// Describe says in one line what the grant allows, as pages, messages and the audit show it.
func (g Grant) Describe() string {
	if g.Scope == ScopeCall {
		return fmt.Sprintf("%s may repeat this exact %s call on task %s", g.Agent, g.ToolName, g.TaskID)
	}
	return fmt.Sprintf("%s may call %s where %s matches %q in project %s", g.Agent, g.ToolName, g.Field, g.Pattern, g.Project)
}

// stringField reads one top-level string field of a canonical JSON object.
func stringField(canonical []byte, field string) (string, bool) {
	var obj map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(canonical))
	if err := dec.Decode(&obj); err != nil {
		return "", false
	}
	raw, ok := obj[field]
	if !ok {
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

// DefaultField is the input field a pattern grant offers first: a shell
// command's "command" when the call has one, else a path field (file_path,
// notebook_path, path), else its first string field.
func DefaultField(canonical []byte) (field, value string) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(canonical, &obj); err != nil {
		return "", ""
	}
	for _, f := range append(slices.Clone(CommandFields), PathFields...) {
		if v, ok := stringField(canonical, f); ok {
			return f, v
		}
	}
	// Canonical JSON has sorted keys; walk them in that order.
	dec := json.NewDecoder(bytes.NewReader(canonical))
	if _, err := dec.Token(); err != nil {
		return "", ""
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "", ""
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return "", ""
		}
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return key, s
		}
	}
	return "", ""
}

// CheckPattern refuses a pattern or field an owner should not be able to
// save: empty, too long, a pattern of wildcards alone (which would allow
// every call of the tool), one with a control character, or one its
// field's kind could read otherwise (see pattern.go).
func CheckPattern(field, pattern string) error {
	switch {
	case field == "" || utf8.RuneCountInString(field) > MaxField:
		return fmt.Errorf("the input field must be 1 to %d characters", MaxField)
	case strings.TrimSpace(pattern) == "":
		return fmt.Errorf("the pattern is empty")
	case utf8.RuneCountInString(pattern) > MaxPattern:
		return fmt.Errorf("the pattern is longer than %d characters", MaxPattern)
	case hasControl(pattern):
		return fmt.Errorf("the pattern must be one line, without control characters")
	case strings.Trim(pattern, "*/ ") == "":
		return fmt.Errorf("the pattern %q would match every call: give at least the start of the %s", pattern, KindOf(field))
	}
	var err error
	switch KindOf(field) {
	case KindCommand:
		err = checkCommandPattern(pattern)
	case KindPath:
		err = checkPathPattern(pattern)
	}
	if err != nil {
		return fmt.Errorf("the pattern %q: %w", pattern, err)
	}
	return nil
}

// CheckHours bounds how long a grant lasts.
func CheckHours(hours int) error {
	if hours < MinHours || hours > MaxHours {
		return fmt.Errorf("a grant lasts %d to %d hours, not %d", MinHours, MaxHours, hours)
	}
	return nil
}
