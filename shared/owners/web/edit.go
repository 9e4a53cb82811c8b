package web

import (
	"encoding/json"
	"errors"
	"net/url"
	"strings"

	"github.com/useprickle/prickle/shared/domain/step"
)

// Edit, then approve: the decide forms of a step (approval page, task page)
// hold its call ready to edit, its command line for a shell tool
// (step.CommandFields: form field "command") else its whole input as JSON
// (field "input"); the button decision=edit approves the edited call. The
// team service bounds the edit as request_step's input and records it.

// maxDecideForm bounds a decide form's body: it may hold an edited call,
// whose input (up to step.MaxInputBytes as canonical JSON) comes indented
// and percent-encoded, so several times that size.
const maxDecideForm = 16 * step.MaxInputBytes

// decisionEdit is the decide forms' value of "decision" that approves the edited call.
const decisionEdit = "edit"

// errEditGrant: a grant allows the call as asked; an edited call is approved once.
var errEditGrant = errors.New("a standing grant allows the call as asked, and an edited call is approved once: choose “Approve once” to approve your edit")

// editedCall is the call the decide form's owner approves with
// decision=edit: the step's input with its command line replaced, or the
// input the owner wrote. A command line that is the asked one but for line
// endings and surrounding space (a browser sends a textarea's lines as
// CRLF) is the call as asked.
func editedCall(form url.Values, s step.Step) (json.RawMessage, error) {
	if g := form.Get("grant"); g != "" && g != "once" {
		return nil, errEditGrant
	}
	cmd, hasCmd := form["command"]
	in, hasIn := form["input"]
	switch {
	case hasCmd && hasIn, len(cmd) > 1, len(in) > 1:
		return nil, errors.New("the form holds more than one edited call")
	case hasCmd:
		line := normalLine(cmd[0])
		if asked, ok := step.Command(s.ToolName, s.Input); ok && line == normalLine(asked) {
			return s.Input, nil
		}
		return step.WithCommand(s.ToolName, s.Input, line)
	case hasIn:
		return json.RawMessage(in[0]), nil
	}
	return nil, errors.New("the form holds no edited call")
}

// normalLine is a command line as typed in a textarea: LF line endings, no surrounding space.
func normalLine(s string) string {
	return strings.TrimSpace(strings.ReplaceAll(s, "\r\n", "\n"))
}

// editView is a pending step's call as its edit form shows it: its command
// line (Command set) or its input as indented JSON, the owner's own text
// when a refused edit comes back (Open then shows the form unfolded). A
// call stored beyond request_step's bounds (before they were) is not
// editable: the page shows it clipped.
type editView struct {
	Command, Input string
	IsCommand      bool
	Open, Editable bool
}

func editOf(s step.Step, input string) editView {
	if _, err := step.CheckInput(s.Input); err != nil {
		return editView{}
	}
	if cmd, ok := step.Command(s.ToolName, s.Input); ok {
		return editView{Command: cmd, IsCommand: true, Editable: true}
	}
	return editView{Input: input, Editable: true}
}

// again is the edit form showing what the owner sent, after an edit was refused.
func (e editView) again(form url.Values) editView {
	e.Open = true
	if e.IsCommand {
		e.Command = form.Get("command")
	} else {
		e.Input = form.Get("input")
	}
	return e
}
