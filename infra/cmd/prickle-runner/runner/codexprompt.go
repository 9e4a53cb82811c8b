package runner

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/useprickle/prickle/shared/domain/step"
)

// What a Codex run tells the model beyond the project's prompt: the call a
// previous run left waiting for the owner, quoted exactly, and the owner's
// refusals (Codex's decline carries no message, so they come in a new turn).

// resumePrompt is the prompt of a run whose previous run ended while its
// owner was still asked about a call: the model makes exactly that call
// again, which is the same step, allowed once if the owner approved it.
func resumePrompt(prompt string, o *openCall) string {
	if o == nil {
		return prompt
	}
	return fmt.Sprintf("%s\n\nYour previous run (%s) asked your owner, through Prickle, before this call, and it ended before the answer came:\n\n  tool: %s\n  input: %s\n\n"+
		"If you still need it, make exactly that call again: the same %s, unchanged. Prickle will then tell Codex what your owner decided; if they allowed it, it runs once.",
		prompt, o.RunID, o.ToolName, string(o.Input), callNoun(o.ToolName))
}

// refusal is a call that did not run and what Prickle said about it;
// Edited, when the owner approved an edit of the call, is the edited input.
type refusal struct {
	Ask     StepAsk
	Message string
	Edited  json.RawMessage
}

// refusedPrompt starts the turn after one in which calls were declined:
// refused ones are not to be tried again; edited ones are to be made as the
// owner edited them (that call is the same step, allowed once).
func refusedPrompt(rs []refusal) string {
	var b strings.Builder
	var refused, edited []refusal
	for _, r := range rs {
		if r.Edited != nil {
			edited = append(edited, r)
		} else {
			refused = append(refused, r)
		}
	}
	if len(edited) > 0 {
		b.WriteString("Prickle: your owner edited these calls before allowing them. Codex cannot run an edited call in place of the one it asked, so they were not made (Codex's \"rejected\"):\n")
		for _, r := range edited {
			fmt.Fprintf(&b, "\n  tool: %s\n  you asked: %s\n  your owner allowed: %s\n", r.Ask.ToolName, string(r.Ask.Input), string(r.Edited))
			if cmd, ok := step.Command(r.Ask.ToolName, r.Edited); ok {
				asked, _ := step.Command(r.Ask.ToolName, r.Ask.Input)
				if script, ok := codexScript(asked, cmd); ok {
					fmt.Fprintf(&b, "  so run this command instead: %s\n  (Codex runs it as: %s)\n", script, cmd)
				} else {
					fmt.Fprintf(&b, "  so run this command instead: %s\n", cmd)
				}
			}
		}
		b.WriteString("\nMake each edited call now, exactly as your owner edited it (a command: that command, in the same directory), not the one you asked: Prickle allows it once, within " + strconv.Itoa(int(step.UseWindow/time.Minute)) + " minutes.")
		if len(refused) > 0 {
			b.WriteString("\n\n")
		}
	}
	if len(refused) > 0 {
		b.WriteString("Prickle: these calls were not made, and Codex's \"rejected\" carried no reason. Here is what your owner (through Prickle) said:\n")
		for _, r := range refused {
			fmt.Fprintf(&b, "\n  tool: %s\n  input: %s\n  answer: %s\n", r.Ask.ToolName, string(r.Ask.Input), r.Message)
		}
		b.WriteString("\nDon't try them again. Finish without them, or return what you have and say why; checkpoint as you go.")
	}
	return b.String()
}

func callNoun(tool string) string {
	switch tool {
	case CodexShellTool:
		return "command in the same directory"
	case CodexPatchTool:
		return "patch"
	}
	return "tool with the same arguments"
}

// codexScript is the script of cmd, a command as Codex asks to run it
// (`<shell> -lc '<script>'`): what the model writes, which Codex wraps so.
// ok is false unless cmd wraps one plain shell word with the shell asked.
func codexScript(asked, cmd string) (string, bool) {
	shell, word, ok := cutShell(cmd)
	askedShell, _, askedOK := cutShell(asked)
	if !ok || !askedOK || shell != askedShell {
		return "", false
	}
	return shellWord(word)
}

// cutShell splits `<shell> -lc <word>` (or -c) after its flag.
func cutShell(cmd string) (shell, word string, ok bool) {
	for _, flag := range []string{" -lc ", " -c "} {
		if i := strings.Index(cmd, flag); i > 0 && !strings.ContainsAny(cmd[:i], " '\"") {
			return cmd[:i+len(flag)], cmd[i+len(flag):], true
		}
	}
	return "", "", false
}

// shellWord reads w as one POSIX shell word of '…' and plain "…" runs,
// backslash-escaped and plain characters; ok is false for anything a shell
// would expand or split.
func shellWord(w string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(w); {
		switch c := w[i]; {
		case c == '\'' || c == '"':
			j := strings.IndexByte(w[i+1:], c)
			if j < 0 || (c == '"' && strings.ContainsAny(w[i+1:i+1+j], "$`\\")) {
				return "", false
			}
			b.WriteString(w[i+1 : i+1+j])
			i += j + 2
		case c == '\\' && i+1 < len(w):
			b.WriteByte(w[i+1])
			i += 2
		case strings.IndexByte(" \t\n;&|<>()$`*?[#~\\", c) >= 0:
			return "", false
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), b.Len() > 0
}
