package runner

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
)

// claudeSettings is the settings file (--settings) a Claude Code run gets:
// Prickle's PreToolUse hook for every tool, and its PostToolUse hook after
// Bash (which claims what the command changed), both this runner's own
// `prickle-runner hook`. The same file is given when the session resumes.
const claudeSettings = "claude-settings.json"

// hookTimeoutSeconds bounds one hook call (one request_step round trip).
const hookTimeoutSeconds = 120

// claudeCommand builds a Claude Code run: a new session with the prompt, a
// resumed session with the resume prompt, or — when the last run paused on
// a call — a bare resume, which makes Claude Code ask that very call again.
func claudeCommand(p Project, l Launch, c Command) (Command, error) {
	path, err := writeMCPConfig(l.MCPDir, l.MCPURL, l.Wake)
	if err != nil {
		return Command{}, err
	}
	settings, err := writeHookSettings(l.SessionDir, l.Self)
	if err != nil {
		return Command{}, err
	}
	c.MCPConfig = path
	c.Env = append(c.Env, "PRICKLE_MCP_CONFIG="+path, "PRICKLE_ALLOWED_TOOLS="+strings.Join(p.AllowedTools, ","), "PRICKLE_PROJECT_DIR="+p.Dir)
	s := l.Session
	c.Resume = s.ID != "" && s.Template == TemplateClaude && s.Dir == p.Dir
	c.Argv = []string{programOr(p.Program, "claude"), "-p"}
	switch {
	case c.Resume && s.Paused != nil:
		c.SessionID = s.ID
		c.Argv = append(c.Argv, "--resume", s.ID)
	case c.Resume:
		c.SessionID = s.ID
		c.Argv = append(c.Argv, ResumePrompt(p, l.Wake, l.Asked), "--resume", s.ID)
	default:
		if c.SessionID, err = newSessionID(); err != nil {
			return Command{}, err
		}
		prompt := Prompt(p, l.Wake)
		if l.Asked != nil {
			// The task's earlier conversation is lost (or was elsewhere): say what it asked.
			prompt = ResumePrompt(p, l.Wake, l.Asked)
		}
		c.Argv = append(c.Argv, prompt, "--session-id", c.SessionID)
	}
	c.Argv = append(c.Argv, "--settings", settings, "--mcp-config", path,
		"--permission-prompt-tool", PermissionPromptTool,
		"--allowedTools", strings.Join(p.AllowedTools, ","),
		"--output-format", "json")
	c.Argv = append(c.Argv, p.Args...)
	return c, nil
}

// writeHookSettings writes the run's Claude Code settings into the task's
// session dir: the hook is `<self> hook`, whose run token, Prickle URL and
// allow-list come from the run's environment, so the file holds no secret.
func writeHookSettings(dir, self string) (string, error) {
	if self == "" {
		return "", fmt.Errorf("claude template: the runner's own executable is unknown (it is the run's hook)")
	}
	settings := map[string]any{"hooks": map[string]any{"PreToolUse": []any{map[string]any{
		"matcher": "*",
		"hooks": []any{map[string]any{
			"type": "command", "command": shellQuote(self) + " " + HookCommand, "timeout": hookTimeoutSeconds,
		}},
	}}, "PostToolUse": []any{map[string]any{
		"matcher": ClaudeShellTool,
		"hooks": []any{map[string]any{
			"type": "command", "command": shellQuote(self) + " " + HookCommand, "timeout": hookTimeoutSeconds,
		}},
	}}}}
	if err := writeJSON(dir, claudeSettings, settings); err != nil {
		return "", fmt.Errorf("claude settings: %w", err)
	}
	return filepath.Join(dir, claudeSettings), nil
}

// shellQuote quotes s for sh: Claude Code runs a hook's command with a shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// newSessionID is a random (version 4) UUID, the form --session-id takes.
func newSessionID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("session id: %w", err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]), nil
}

// ClaudeResult is what the runner reads of `claude -p --output-format json`:
// how the run stopped, its session, the call it paused on, and its usage.
type ClaudeResult struct {
	Type       string `json:"type"`
	IsError    bool   `json:"is_error"`
	StopReason string `json:"stop_reason"`
	SessionID  string `json:"session_id"`
	// Deferred is the call a PreToolUse hook deferred (stop_reason tool_deferred).
	Deferred *struct {
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	} `json:"deferred_tool_use"`
	TotalCostUSD float64 `json:"total_cost_usd"`
	NumTurns     int     `json:"num_turns"`
	DurationMS   int64   `json:"duration_ms"`
	Usage        struct {
		InputTokens              int64 `json:"input_tokens"`
		OutputTokens             int64 `json:"output_tokens"`
		CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
		CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	} `json:"usage"`
	// ModelUsage is the run's use per model (what each cost in costUSD).
	ModelUsage map[string]struct {
		CostUSD float64 `json:"costUSD"`
	} `json:"modelUsage"`
}

// StopDeferred is the stop_reason of a run paused on a deferred call.
const StopDeferred = "tool_deferred"

// Paused is the call the run paused on, or nil.
func (r ClaudeResult) Paused() *Call {
	if r.StopReason != StopDeferred || r.Deferred == nil {
		return nil
	}
	return &Call{ToolUseID: r.Deferred.ID, Name: r.Deferred.Name, Input: r.Deferred.Input}
}

// Usage is a run's model usage as its agent CLI reported it.
func (r ClaudeResult) usage() *Usage {
	return &Usage{CostUSD: r.TotalCostUSD, InputTokens: r.Usage.InputTokens + r.Usage.CacheCreationInputTokens + r.Usage.CacheReadInputTokens,
		OutputTokens: r.Usage.OutputTokens, Turns: r.NumTurns, DurationMS: r.DurationMS, Model: r.mainModel()}
}

// parseClaudeResult finds the result object in the end of a run's standard
// output: the last line that is a JSON object of type "result".
func parseClaudeResult(stdout []byte) (ClaudeResult, bool) {
	lines := bytes.Split(bytes.TrimSpace(stdout), []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		line := bytes.TrimSpace(lines[i])
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		var r ClaudeResult
		if json.Unmarshal(line, &r) == nil && r.Type == "result" {
			return r, true
		}
	}
	return ClaudeResult{}, false
}

// Usage is what a run's agent CLI reported of its model use; it is also
// the usage report POST /runner/ended takes (shared/domain/modelspend.Report).
type Usage struct {
	CostUSD      float64 `json:"cost_usd"`
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	Turns        int     `json:"turns"`
	DurationMS   int64   `json:"duration_ms"`
	Model        string  `json:"model,omitempty"`
}
