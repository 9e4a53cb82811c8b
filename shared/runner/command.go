package runner

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/useprickle/prickle/shared/wake"
)

// PermissionPromptTool is the MCP tool Claude Code asks before any call its allow-list does not cover.
const PermissionPromptTool = "mcp__prickle__request_step"

// Command is what one run starts: argv, its directory and environment, and
// the MCP config file written for it (removed when the run ends).
type Command struct {
	Argv      []string
	Dir       string
	Env       []string
	MCPConfig string
}

// Prompt fills the project's prompt with the wake-up's values.
func Prompt(p Project, w wake.Payload) string {
	resumes := w.ResumesRun
	if resumes == "" {
		resumes = "none"
	}
	return strings.NewReplacer("{task_id}", w.TaskID, "{reason}", w.Reason, "{resumes_run}", resumes, "{run_id}", w.RunID).Replace(p.Prompt)
}

// RunEnv is the run's details as environment variables, for any command.
func RunEnv(mcpURL, project string, w wake.Payload) []string {
	return []string{
		"PRICKLE_MCP_URL=" + mcpURL,
		"PRICKLE_RUN_TOKEN=" + w.RunToken,
		"PRICKLE_RUN_ID=" + w.RunID,
		"PRICKLE_TASK_ID=" + w.TaskID,
		"PRICKLE_PROJECT=" + project,
		"PRICKLE_REASON=" + w.Reason,
		"PRICKLE_RESUMES_RUN=" + w.ResumesRun,
	}
}

// BuildCommand turns a project's template and a wake-up into the command to
// start. For Claude Code it writes the run's MCP config (mode 0600, holding
// the run token) into dir; the caller removes Command.MCPConfig afterwards.
// base is the runner's own environment minus anything the run must not see;
// self is the runner's own executable, which hosts Codex runs.
func BuildCommand(p Project, mcpURL, project string, w wake.Payload, dir string, base []string, self string) (Command, error) {
	c := Command{Dir: p.Dir, Env: append(append([]string{}, base...), RunEnv(mcpURL, project, w)...)}
	prompt := Prompt(p, w)
	switch p.Template {
	case TemplateClaude:
		path, err := writeMCPConfig(dir, mcpURL, w)
		if err != nil {
			return Command{}, err
		}
		c.MCPConfig = path
		c.Env = append(c.Env, "PRICKLE_MCP_CONFIG="+path)
		c.Argv = append([]string{programOr(p.Program, "claude"), "-p", prompt,
			"--mcp-config", path,
			"--permission-prompt-tool", PermissionPromptTool,
			"--allowedTools", strings.Join(p.AllowedTools, ",")}, p.Args...)
	case TemplateCodex:
		c.Argv = append([]string{self, CodexRunCommand, "--codex", programOr(p.Program, "codex")}, p.Args...)
		c.Env = append(c.Env, "PRICKLE_PROMPT="+prompt)
	case TemplateCommand:
		c.Argv = append(append([]string{}, p.Command...), p.Args...)
		c.Env = append(c.Env, "PRICKLE_PROMPT="+prompt)
	default:
		return Command{}, fmt.Errorf("template %q is not claude, codex or command", p.Template)
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

func writeMCPConfig(dir, mcpURL string, w wake.Payload) (string, error) {
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
