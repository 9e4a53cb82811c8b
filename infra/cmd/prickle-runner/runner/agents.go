package runner

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// agentOwnTools are Prickle's own tools a woken run calls without asking
// (request_step only asks; hand_off_task hands the next task on to a
// teammate, whose own calls are asked of its owner; the destructive
// decline_task and cancel_task are asked); each CLI names them its own way.
var agentOwnTools = []string{"read_room", "get_task", "hand_off_task", "accept_task", "save_checkpoint", "return_result", "review_result", "update_pulse", "request_step"}

func ownTools(prefix string, reading ...string) []string {
	out := make([]string, 0, len(agentOwnTools)+len(reading))
	for _, t := range agentOwnTools {
		out = append(out, prefix+t)
	}
	return append(out, reading...)
}

// agentAllowedTools are the qwen, gemini, copilot and opencode templates' default
// allow-lists: Prickle's own tools and reading, in each CLI's names.
var agentAllowedTools = map[string][]string{
	// qwen reaches MCP tools through tool_search and tool_call; its hook
	// sees the MCP tool's own name.
	TemplateQwen:    ownTools("mcp__prickle__", "read_file", "read_many_files", "list_directory", "glob", "grep_search", "tool_search"),
	TemplateGemini:  ownTools("mcp_prickle_", "read_file", "read_many_files", "list_directory", "glob", "grep_search"),
	TemplateCopilot: ownTools("prickle-", "view", "glob", "grep", "report_intent"),
	// opencode names an MCP tool <server>_<tool>.
	TemplateOpencode: ownTools("prickle_", "read", "glob", "grep", "list"),
}

// agentCommand builds a run of the qwen, gemini, copilot or opencode template: `<self>
// agent-run --cli <name> --program <program> -- <args>`, with both prompts
// and the allow-list in its environment.
func agentCommand(p Project, l Launch, c Command) (Command, error) {
	if l.Self == "" {
		return Command{}, fmt.Errorf("%s template: the runner's own executable is unknown (it runs the CLI and is its gate)", p.Template)
	}
	program := programOr(p.Program, agentTemplates[p.Template].program())
	c.Argv = append([]string{l.Self, AgentRunCommand, "--cli", p.Template, "--program", program, "--"}, p.Args...)
	newPrompt := Prompt(p, l.Wake)
	if l.Asked != nil {
		// A new conversation of a task whose runs asked before: say what.
		newPrompt = ResumePrompt(p, l.Wake, l.Asked)
	}
	c.Env = append(c.Env, "PRICKLE_NEW_PROMPT="+newPrompt, "PRICKLE_RESUME_PROMPT="+ResumePrompt(p, l.Wake, l.Asked),
		"PRICKLE_ALLOWED_TOOLS="+strings.Join(p.AllowedTools, ","), "PRICKLE_PROJECT_DIR="+p.Dir)
	return c, nil
}

// sessionNamer is a template whose CLI names a new session itself
// (opencode): agent-run keeps the id the run's output gives.
type sessionNamer interface {
	sessionOf(stdout []byte) string
}

// resultWatcher is a template that says itself when its CLI's run is over
// (else: once its usage can be read).
type resultWatcher interface {
	finished(stdout []byte) bool
}

// homeDirer is a template whose sign-in files are linked elsewhere than
// its home's top.
type homeDirer interface {
	homeDir(cliHome string) string
}

// cliValues are what the qwen, gemini, copilot and opencode templates
// differ by in value alone; each template embeds its own (see its file).
type cliValues struct {
	// cli is the template's name, exe its program's default name.
	cli, exe string
	// edit: the CLI runs an allowed call with an edited input.
	edit bool
	// hook is the hook's timeout in the CLI's settings, gate the gate's bound.
	hook, gate time.Duration
	// logins are the files of the user's CLI directory that hold their sign-in.
	logins []string
	// shells are the CLI's tools that run commands.
	shells []string
}

func (v cliValues) name() string               { return v.cli }
func (v cliValues) program() string            { return v.exe }
func (v cliValues) edits() bool                { return v.edit }
func (v cliValues) hookTimeout() time.Duration { return v.hook }
func (v cliValues) gateLimit() time.Duration   { return v.gate }
func (v cliValues) loginFiles() []string       { return v.logins }
func (v cliValues) shellTool(tool string) bool { return slices.Contains(v.shells, tool) }
