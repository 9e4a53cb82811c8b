package step

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// An owner may edit a pending step's call, then approve the edited call
// (Step.Edited). The step stays the call the run asked (its Input and its
// Fingerprint), so the run that asks that call again is answered with the
// edited input; the edited call itself, asked by that run or the run that
// resumes it, is the same step too (Answers). Either way it is used once.

// CommandFields names the field that holds the command line of the
// well-known shell tools (Claude Code's Bash, Codex's exec_command as
// prickle-runner asks it): an owner edits that field as a plain command line.
var CommandFields = map[string]string{
	"Bash":         "command",
	"exec_command": "command",
	// Qwen Code's and Gemini CLI's shell tool, and Copilot CLI's and opencode's.
	"run_shell_command": "command",
	"bash":              "command",
}

// Command returns the command line of a shell tool's input, and whether the
// input has one to edit as a line (a string in the tool's command field).
func Command(toolName string, input json.RawMessage) (string, bool) {
	field := CommandFields[toolName]
	if field == "" {
		return "", false
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(input, &fields) != nil {
		return "", false
	}
	var cmd string
	if json.Unmarshal(fields[field], &cmd) != nil {
		return "", false
	}
	return cmd, true
}

// WithCommand is input with its command field set to cmd: what an owner's
// edit of the command line makes of the call; every other field stays.
func WithCommand(toolName string, input json.RawMessage, cmd string) (json.RawMessage, error) {
	if _, ok := Command(toolName, input); !ok {
		return nil, fmt.Errorf("%s's input has no command line to edit", toolName)
	}
	if strings.TrimSpace(cmd) == "" {
		return nil, fmt.Errorf("the edited command is empty")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(input, &fields); err != nil {
		return nil, fmt.Errorf("step input: %w", err)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(cmd); err != nil {
		return nil, fmt.Errorf("edited command: %w", err)
	}
	fields[CommandFields[toolName]] = bytes.TrimSpace(b.Bytes())
	out, err := json.Marshal(fields)
	if err != nil {
		return nil, fmt.Errorf("edited input: %w", err)
	}
	return out, nil
}

// ChangedBy reports whether an owner's edit changes the call s asks: edit
// is the canonical JSON CheckInput made of it (an edit is bounded and an
// object as request_step's input is). The same command reworded (its
// descriptive fields) is the call as asked, approved as it is.
func (s Step) ChangedBy(edit []byte) bool {
	return !bytes.Equal(Identity(s.ToolName, edit), Identity(s.ToolName, s.Input))
}

// EditedFingerprint is the fingerprint of the edited call, "" when the step
// was not edited.
func (s Step) EditedFingerprint() string {
	if len(s.Edited) == 0 {
		return ""
	}
	return Fingerprint(s.TaskID, s.ToolName, s.Edited)
}

// Answers reports whether a call of fingerprint fp is this step's: the call
// as asked, or, once the owner approved an edit, the edited call.
func (s Step) Answers(fp string) bool {
	return fp == s.Fingerprint || (len(s.Edited) > 0 && fp == s.EditedFingerprint())
}

// Allowed is the input the run may use once the step is approved: the
// owner's edit when there is one, else the input as asked.
func (s Step) Allowed() json.RawMessage {
	if len(s.Edited) > 0 {
		return s.Edited
	}
	return s.Input
}
