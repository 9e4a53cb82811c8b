package runner

import (
	"encoding/json"
	"path/filepath"
	"time"
)

// Gemini CLI 0.61.0 (npm @google/gemini-cli) as a woken run: `gemini
// --approval-mode yolo -o json --session-id <uuid> -p <prompt>` (then `-r
// <id>`), GEMINI_CLI_HOME a directory of the task's (its sessions live in
// .gemini there), whose .gemini/settings.json is the user's own
// ~/.gemini/settings.json (read, never written) with Prickle's MCP server and
// its BeforeTool hook. Headless gemini offers the shell tool only under
// yolo, so the hook is the only gate. The hook's input has no call id; an
// allow's hookSpecificOutput.tool_input runs as edited; gemini runs the call
// when a hook exits 1, answers with anything but JSON or times out.
type geminiCLI struct{ cliValues }

var geminiTemplate = geminiCLI{cliValues{cli: TemplateGemini, exe: "gemini", edit: true, hook: 120 * time.Second, gate: 100 * time.Second,
	logins: []string{"oauth_creds.json", "google_accounts.json", "installation_id"}, shells: []string{"run_shell_command"}}}

type geminiHook struct {
	Event     string          `json:"hook_event_name"`
	ToolName  string          `json:"tool_name"`
	ToolInput json.RawMessage `json:"tool_input"`
}

func (h geminiHook) call() gateCall {
	return beforeOrAfter(h.Event, "BeforeTool", []string{"AfterTool"}, gateCall{Tool: h.ToolName, Input: h.ToolInput})
}

func (geminiCLI) parse(b []byte) (gateCall, error) { return parseHook[geminiHook](b, "hook") }

func (geminiCLI) answer(a gateAnswer) []byte {
	type specific struct {
		HookEventName     string          `json:"hookEventName"`
		ToolInput         json.RawMessage `json:"tool_input,omitempty"`
		AdditionalContext string          `json:"additionalContext,omitempty"`
	}
	o := struct {
		Decision           string    `json:"decision"`
		Reason             string    `json:"reason,omitempty"`
		HookSpecificOutput *specific `json:"hookSpecificOutput,omitempty"`
	}{Decision: "deny", Reason: a.Reason}
	if a.Allow {
		o.Decision = "allow"
		if len(a.Input) > 0 || a.Note != "" {
			o.HookSpecificOutput = &specific{HookEventName: "BeforeTool", ToolInput: a.Input, AdditionalContext: a.Note}
		}
	}
	return answerJSON(o, "decision", "reason")
}

// Gemini CLI's edit tools (write_file, replace) name their file file_path;
// its shell is run_shell_command, after which its AfterTool hook claims.
func (geminiCLI) editedFile(tool string, input json.RawMessage) string {
	return editedPath(tool, input, "file_path", "write_file", "replace")
}

func (geminiCLI) afterAnswer(note string) []byte { return afterContext("AfterTool", note) }

func (geminiCLI) userDir(getenv func(string) string) string {
	if d := getenv("GEMINI_CLI_HOME"); d != "" {
		return filepath.Join(d, ".gemini")
	}
	return filepath.Join(getenv("HOME"), ".gemini")
}

func (g geminiCLI) prepare(r *agentRun) error {
	dir := filepath.Join(r.cliHome, ".gemini")
	settings, err := userSettings(filepath.Join(r.userDir, "settings.json"))
	if err != nil {
		return err
	}
	settings["hooks"] = map[string]any{"BeforeTool": []any{map[string]any{"matcher": ".*", "hooks": []any{map[string]any{
		"type": "command", "command": gateCommand(r.self, g.name()), "timeout": g.hookTimeout().Milliseconds(),
	}}}}, "AfterTool": []any{map[string]any{"matcher": "run_shell_command", "hooks": []any{map[string]any{
		"type": "command", "command": afterCommand(r.self, g.name()), "timeout": g.hookTimeout().Milliseconds(),
	}}}}}
	settings["mcpServers"] = prickleHTTPServer(r)
	path := filepath.Join(dir, "settings.json")
	r.secretFiles = append(r.secretFiles, path)
	if err := writeSecretJSON(path, settings); err != nil {
		return err
	}
	r.env = append(r.env, "GEMINI_CLI_HOME="+r.cliHome, "GEMINI_CLI_TRUST_WORKSPACE=true")
	return nil
}

func (geminiCLI) argv(r *agentRun, prompt string) []string {
	a := append([]string{r.program, "--approval-mode", "yolo", "-o", "json"}, sessionFlag(r, "-r", "--session-id")...)
	a = append(a, r.args...)
	return append(a, "-p", prompt)
}

// usage reads `-o json`: one object whose stats count this run's tokens per model.
func (geminiCLI) usage(stdout []byte, _ *agentRun) (agentUsage, bool) {
	var o struct {
		SessionID string `json:"session_id"`
		Stats     *struct {
			Models map[string]struct {
				Tokens struct {
					Prompt     int64 `json:"prompt"`
					Input      int64 `json:"input"`
					Candidates int64 `json:"candidates"`
					Thoughts   int64 `json:"thoughts"`
				} `json:"tokens"`
				API struct {
					Requests int `json:"totalRequests"`
				} `json:"api"`
			} `json:"models"`
		} `json:"stats"`
	}
	if json.Unmarshal(lastJSON(stdout, '{'), &o) != nil || o.Stats == nil {
		return agentUsage{}, false
	}
	u := agentUsage{SessionID: o.SessionID}
	best := int64(-1)
	for name, m := range o.Stats.Models {
		in := m.Tokens.Prompt
		if in == 0 {
			in = m.Tokens.Input
		}
		u.Tokens.Input += in
		u.Tokens.Output += m.Tokens.Candidates + m.Tokens.Thoughts
		u.Turns += m.API.Requests
		if in > best || (in == best && name < u.Model) {
			best, u.Model = in, name
		}
	}
	return u, true
}
