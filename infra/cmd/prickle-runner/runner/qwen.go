package runner

import (
	"encoding/json"
	"path/filepath"
	"time"
)

// Qwen Code 0.24.4 (npm @qwen-code/qwen-code) as a woken run: `qwen
// --approval-mode yolo -o json --session-id <uuid> <prompt>` (then `-r <id>`),
// QWEN_HOME a directory of the task's (its sessions live there), whose
// settings.json is the user's own ~/.qwen/settings.json (read, never
// written) with Prickle's MCP server, its PreToolUse hook and no memory
// extractor. Headless qwen offers the shell tool only under yolo, so the
// hook is the only gate. The hook's input carries the model's tool_call_id;
// an allow's updatedInput is ignored by qwen (an edit is told to the model,
// see agentgate.go); qwen runs the call when a hook fails, answers badly or
// outlives 60 s whatever its timeout says.
type qwenCLI struct{ cliValues }

// qwenTemplate's gate limit: qwen runs a call whose hook has not answered
// after 60 s. Its login files, linked into the task's qwen home, are those
// of the user's sign-in, so that the run signs in as they do.
var qwenTemplate = qwenCLI{cliValues{cli: TemplateQwen, exe: "qwen", hook: 55 * time.Second, gate: 50 * time.Second,
	logins: []string{"oauth_creds.json", "installation_id"}, shells: []string{"run_shell_command"}}}

type qwenHook struct {
	Event      string          `json:"hook_event_name"`
	ToolName   string          `json:"tool_name"`
	ToolInput  json.RawMessage `json:"tool_input"`
	ToolCallID string          `json:"tool_call_id"`
	ToolUseID  string          `json:"tool_use_id"`
}

func (h qwenHook) call() gateCall {
	id := h.ToolCallID
	if id == "" {
		id = h.ToolUseID
	}
	return beforeOrAfter(h.Event, "PreToolUse", []string{"PostToolUse", "PostToolUseFailure"}, gateCall{Tool: h.ToolName, Input: h.ToolInput, CallID: id})
}

func (qwenCLI) parse(b []byte) (gateCall, error) { return parseHook[qwenHook](b, "hook") }

func (qwenCLI) answer(a gateAnswer) []byte {
	var o hookOutput
	o.HookSpecificOutput.HookEventName = "PreToolUse"
	o.HookSpecificOutput.Decision = "deny"
	if a.Allow {
		o.HookSpecificOutput.Decision = "allow"
		o.HookSpecificOutput.AdditionalContext = a.Note
	}
	o.HookSpecificOutput.Reason = a.Reason
	b, _ := json.Marshal(o) // strings only: cannot fail
	return b
}

// Qwen Code's edit tools (write_file, edit) name their file file_path; its
// shell is run_shell_command, after which its PostToolUse hook (and
// PostToolUseFailure: a command that fails may have written) claims.
func (qwenCLI) editedFile(tool string, input json.RawMessage) string {
	return editedPath(tool, input, "file_path", "write_file", "edit")
}

func (qwenCLI) afterAnswer(note string) []byte { return afterContext("PostToolUse", note) }

func (qwenCLI) userDir(getenv func(string) string) string {
	return xdgDir(getenv, "QWEN_HOME", ".qwen")
}

func (q qwenCLI) prepare(r *agentRun) error {
	home := r.cliHome
	settings, err := userSettings(filepath.Join(r.userDir, "settings.json"))
	if err != nil {
		return err
	}
	after := []any{map[string]any{"matcher": "run_shell_command", "hooks": []any{map[string]any{
		"type": "command", "command": afterCommand(r.self, q.name()), "timeout": int(q.hookTimeout() / time.Second),
	}}}}
	settings["hooks"] = map[string]any{"PreToolUse": []any{map[string]any{"matcher": "*", "hooks": []any{map[string]any{
		"type": "command", "command": gateCommand(r.self, q.name()), "timeout": int(q.hookTimeout() / time.Second),
	}}}}, "PostToolUse": after, "PostToolUseFailure": after}
	settings["mcpServers"] = prickleHTTPServer(r)
	// Its background memory extractor makes model requests of its own.
	settings["memory"] = map[string]any{"enableManagedAutoMemory": false, "enableManagedAutoDream": false, "enableAutoSkill": false}
	r.secretFiles = append(r.secretFiles, filepath.Join(home, "settings.json"))
	if err := writeSecretJSON(filepath.Join(home, "settings.json"), settings); err != nil {
		return err
	}
	r.env = append(r.env, "QWEN_HOME="+home, "QWEN_CODE_SUPPRESS_YOLO_WARNING=1")
	return nil
}

func (qwenCLI) argv(r *agentRun, prompt string) []string {
	a := append([]string{r.program, "--approval-mode", "yolo", "-o", "json"}, sessionFlag(r, "-r", "--session-id")...)
	a = append(a, r.args...)
	return append(a, prompt)
}

// usage reads `-o json`: a JSON array whose item of type "result" has the
// session's usage, summed over every run of the session.
func (qwenCLI) usage(stdout []byte, _ *agentRun) (agentUsage, bool) {
	var items []json.RawMessage
	if json.Unmarshal(lastJSON(stdout, '['), &items) != nil {
		return agentUsage{}, false
	}
	for i := len(items) - 1; i >= 0; i-- {
		var r struct {
			Type      string `json:"type"`
			SessionID string `json:"session_id"`
			NumTurns  int    `json:"num_turns"`
			Duration  int64  `json:"duration_ms"`
			Usage     struct {
				Input     int64 `json:"input_tokens"`
				Output    int64 `json:"output_tokens"`
				CacheRead int64 `json:"cache_read_input_tokens"`
			} `json:"usage"`
			Stats struct {
				Models map[string]json.RawMessage `json:"models"`
			} `json:"stats"`
		}
		if json.Unmarshal(items[i], &r) != nil || r.Type != "result" {
			continue
		}
		return agentUsage{SessionID: r.SessionID, Cumulative: true, Model: firstKey(r.Stats.Models), Turns: r.NumTurns, DurationMS: r.Duration,
			Tokens: tokens{Input: r.Usage.Input, Output: r.Usage.Output}}, true
	}
	return agentUsage{}, false
}
