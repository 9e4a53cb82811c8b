package runner

import (
	"encoding/json"
	"fmt"
	"github.com/useprickle/prickle/shared/domain/wakeup"
	"os"
	"path/filepath"
	"strings"
)

// PermissionPromptTool is the MCP tool Claude Code asks before any call its allow-list does not cover.
const PermissionPromptTool = "mcp__prickle__request_step"

// Command is what one run starts: argv, its directory and environment, the
// MCP config file written for it (removed when the run ends), and the
// session it continues.
type Command struct {
	Argv      []string
	Dir       string
	Env       []string
	MCPConfig string
	// SessionID is the agent CLI's session this run starts or resumes (claude).
	SessionID string
	// Resume is set when the run continues its task's earlier conversation.
	Resume bool
	// Wakeable runs take SIGUSR1 as "a wake-up of your task arrived": a
	// Codex run waiting on its owner asks again at once.
	Wakeable bool
}

// Launch is what a run of a task starts from: the wake-up, where Prickle
// is, and what the runner keeps of the task's conversation.
type Launch struct {
	MCPURL string
	// Project is the task's project slug.
	Project string
	Wake    wakeup.Payload
	// MCPDir is where a run's MCP config file is written.
	MCPDir string
	// Base is the runner's own environment minus what a run must not see.
	Base []string
	// Self is this prickle-runner's executable: Claude Code's PreToolUse hook.
	Self string
	// SessionDir is the task's directory of state kept across its runs.
	SessionDir string
	// Session is the task's conversation so far; an empty ID starts a new one.
	Session Session
	// Asked is the last call the task's runs asked their owner about, if any.
	Asked *Asked
}

// fill replaces a prompt's {task_id}, {reason}, {resumes_run}, {run_id} and {asked}.
func fill(prompt string, w wakeup.Payload, asked *Asked) string {
	resumes := w.ResumesRun
	if resumes == "" {
		resumes = "none"
	}
	return strings.NewReplacer("{task_id}", w.TaskID, "{reason}", w.Reason, "{resumes_run}", resumes,
		"{run_id}", w.RunID, "{asked}", asked.Quote()).Replace(prompt)
}

// Prompt fills the project's prompt with the wake-up's values.
func Prompt(p Project, w wakeup.Payload) string { return fill(p.Prompt, w, nil) }

// ResumePrompt fills the project's resume prompt, quoting the asked call.
func ResumePrompt(p Project, w wakeup.Payload, asked *Asked) string {
	return fill(p.ResumePrompt, w, asked)
}

// RunEnv is the run's details as environment variables, for any command.
func RunEnv(mcpURL, project, sessionDir string, w wakeup.Payload) []string {
	return []string{
		"PRICKLE_MCP_URL=" + mcpURL,
		"PRICKLE_RUN_TOKEN=" + w.RunToken,
		"PRICKLE_RUN_ID=" + w.RunID,
		"PRICKLE_TASK_ID=" + w.TaskID,
		"PRICKLE_PROJECT=" + project,
		"PRICKLE_REASON=" + w.Reason,
		"PRICKLE_RESUMES_RUN=" + w.ResumesRun,
		"PRICKLE_SESSION_DIR=" + sessionDir,
	}
}

// BuildCommand turns a project's template and a launch into the command to
// start. For Claude Code it writes the run's MCP config (mode 0600, holding
// the run token) into l.MCPDir, which the caller removes afterwards, and the
// hook settings into the session dir; it resumes the task's session when it
// has one in the same directory, and a run that paused on a call resumes
// with no prompt, so Claude Code asks that very call again.
func BuildCommand(p Project, l Launch) (Command, error) {
	w := l.Wake
	c := Command{Dir: p.Dir, Env: append(append([]string{}, l.Base...), RunEnv(l.MCPURL, l.Project, l.SessionDir, w)...)}
	switch p.Template {
	case TemplateClaude:
		return claudeCommand(p, l, c)
	case TemplateCodex:
		// codex-run hosts codex app-server and keeps the task's thread in the session dir.
		if l.Self == "" {
			return Command{}, fmt.Errorf("codex template: the runner's own executable is unknown (it hosts Codex)")
		}
		c.Argv = append([]string{l.Self, CodexRunCommand, "--codex", programOr(p.Program, "codex")}, p.Args...)
		c.Wakeable = true
		c.Env = append(c.Env, "PRICKLE_PROMPT="+Prompt(p, w))
	case TemplateQwen, TemplateGemini, TemplateCopilot, TemplateOpencode:
		return agentCommand(p, l, c)
	case TemplateCommand:
		c.Argv = append(append([]string{}, p.Command...), p.Args...)
		c.Env = append(c.Env, "PRICKLE_PROMPT="+Prompt(p, w))
	default:
		return Command{}, fmt.Errorf("template %q is not claude, codex, qwen, gemini, copilot, opencode or command", p.Template)
	}
	return c, nil
}

func programOr(p, def string) string {
	if p != "" {
		return expandHome(p)
	}
	return def
}

// mcpConfig is Claude Code's --mcp-config file: Prickle over HTTP with the run token.
type mcpConfig struct {
	MCPServers map[string]mcpServer `json:"mcpServers"`
}

type mcpServer struct {
	Type    string            `json:"type"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
}

func writeMCPConfig(dir, mcpURL string, w wakeup.Payload) (string, error) {
	b, err := json.Marshal(mcpConfig{MCPServers: map[string]mcpServer{"prickle": {
		Type: "http", URL: mcpURL, Headers: map[string]string{"Authorization": "Bearer " + w.RunToken},
	}}})
	if err != nil {
		return "", fmt.Errorf("encode MCP config: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("MCP config dir: %w", err)
	}
	path := filepath.Join(dir, "mcp-"+safeName(w.RunID)+".json")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return "", fmt.Errorf("write MCP config: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		_ = f.Close()
		_ = os.Remove(path)
		return "", fmt.Errorf("write MCP config: %w", err)
	}
	if err := f.Close(); err != nil {
		_ = os.Remove(path)
		return "", fmt.Errorf("write MCP config: %w", err)
	}
	return path, nil
}

// safeName keeps an id usable as a file name: letters, digits, '-' and '_' only.
func safeName(id string) string {
	var b strings.Builder
	for _, r := range id {
		if r < 128 && (r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
		if b.Len() >= 80 {
			break
		}
	}
	if b.Len() == 0 {
		return "run"
	}
	return b.String()
}
