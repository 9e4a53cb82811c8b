// Package runner is prickle-runner's logic: it takes an agent's wake-ups
// (a signed webhook, or claims pulled from Prickle), starts one run per
// wake-up in the project's directory (Claude Code by default, or Codex
// hosted by codex-run), continuing each task's session, and leaves a
// checkpoint when a run ends without one of its own.
package runner

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Modes in which the runner gets wake-ups.
const (
	ModeWebhook = "webhook" // Prickle POSTs signed wake-ups to the runner
	ModePull    = "pull"    // the runner claims wake-ups from Prickle (no public URL needed)
)

// Templates of the command a run starts.
const (
	TemplateClaude  = "claude"  // Claude Code, pausing on a call its owner decides (Prickle's hook)
	TemplateCodex   = "codex"   // Codex CLI (codex app-server, hosted by codex-run), Prickle asked before its calls
	TemplateCommand = "command" // any command, with the run's details in its environment
	TemplateQwen    = "qwen"    // Qwen Code through agent-run, Prickle's gate before its calls
	TemplateGemini  = "gemini"  // Gemini CLI through agent-run, Prickle's gate before its calls
	TemplateCopilot = "copilot" // GitHub Copilot CLI through agent-run, Prickle's gate before its calls
	// TemplateOpencode is opencode through agent-run, Prickle's gate (a plugin) before its calls.
	TemplateOpencode = "opencode"
)

// DefaultAllowedTools are the tools a Claude Code run may call without asking:
// Prickle's own that coordinate (handing the next task on to a teammate among
// them; not request_step, which is the permission prompt itself, nor the
// destructive decline_task and cancel_task) and reading.
var DefaultAllowedTools = []string{
	"mcp__prickle__read_room", "mcp__prickle__get_task", "mcp__prickle__hand_off_task", "mcp__prickle__accept_task",
	"mcp__prickle__save_checkpoint", "mcp__prickle__return_result", "mcp__prickle__review_result",
	"mcp__prickle__update_pulse", "Read", "Grep", "Glob",
}

// DefaultPrompt is what a woken run is told; {task_id}, {reason} and
// {resumes_run} are replaced with the wake-up's values.
const DefaultPrompt = "Prickle woke you for task {task_id} ({reason}). get_task, then continue; checkpoint as you go. " +
	"If a call waits for your owner, checkpoint and end your turn: you will be woken again when they decide."

// DefaultResumePrompt is what a woken run is told when it continues its
// task's conversation without having paused on a call (or when that
// conversation is lost and a new one starts). {asked} is the last call the
// task's runs asked their owner about, quoted exactly, or "none".
const DefaultResumePrompt = "Prickle woke you again for task {task_id} ({reason}). " +
	"The last call you asked your owner about: {asked}. If your owner has decided on it, make exactly that call again now " +
	"(Prickle answers with the decision); otherwise get_task and continue; checkpoint as you go."

// Config is the runner's configuration file (YAML).
type Config struct {
	// PrickleURL is Prickle's base URL; MCP is served at PrickleURL + "/mcp".
	PrickleURL string `yaml:"prickle_url"`
	// Agent names the agent (owner/agent) in the runner's output; the token decides who it is.
	Agent string `yaml:"agent"`
	// The agent token, one of: a file holding it, an environment variable, or
	// inline; with none, the token `prickle-runner login` kept in StateDir.
	AgentTokenFile string `yaml:"agent_token_file"`
	AgentTokenEnv  string `yaml:"agent_token_env"`
	AgentToken     string `yaml:"agent_token"`
	// Mode is webhook or pull.
	Mode    string  `yaml:"mode"`
	Webhook Webhook `yaml:"webhook"`
	Pull    Pull    `yaml:"pull"`
	// Concurrency is how many runs may go at once (default 2).
	Concurrency int `yaml:"concurrency"`
	// RunTimeout ends a run's whole process group after this long (default 30m).
	RunTimeout time.Duration `yaml:"run_timeout"`
	// Grace is how long a run has after SIGTERM before SIGKILL (default 10s).
	Grace time.Duration `yaml:"grace"`
	// LogDir holds one log file per run and runs.jsonl (default ~/.prickle-runner/logs).
	LogDir string `yaml:"log_dir"`
	// StateDir keeps what outlives a run: each task's session and, in webhook
	// mode, the wake-ups whose runs have not ended (default ~/.prickle-runner/state).
	StateDir string `yaml:"state_dir"`
	// Projects maps a project slug ("*" for any other) to how its runs start.
	Projects map[string]Project `yaml:"projects"`
	// Prices is the cost, per model, of a run whose CLI reports no cost of
	// its own (see Prices).
	Prices Prices `yaml:"model_prices"`
}

// Webhook is where the runner serves signed wake-ups.
type Webhook struct {
	Listen     string `yaml:"listen"` // host:port, default 127.0.0.1:8765
	Path       string `yaml:"path"`   // default /prickle
	SecretFile string `yaml:"secret_file"`
	SecretEnv  string `yaml:"secret_env"`
	Secret     string `yaml:"secret"`
}

// Pull is how the runner claims wake-ups.
type Pull struct {
	WaitSeconds int `yaml:"wait_seconds"` // long poll, 0..25 (default 25)
}

// Project is how a project's runs start.
type Project struct {
	Dir      string `yaml:"dir"`      // working directory of its runs (required)
	Template string `yaml:"template"` // claude (default), codex or command
	// Program overrides the executable of the claude, codex, qwen, gemini, copilot and opencode templates.
	Program string `yaml:"program"`
	// AllowedTools is Claude Code's --allowedTools (default DefaultAllowedTools);
	// for qwen, gemini, copilot and opencode, the tools their gate lets pass unasked
	// (default: Prickle's own and reading, in each CLI's names).
	AllowedTools []string `yaml:"allowed_tools"`
	// Args are added after the template's own arguments.
	Args []string `yaml:"args"`
	// Command is the argv of the command template.
	Command []string `yaml:"command"`
	// Prompt is what a new conversation is told (default DefaultPrompt).
	Prompt string `yaml:"prompt"`
	// ResumePrompt is what a resumed conversation is told (default DefaultResumePrompt).
	ResumePrompt string `yaml:"resume_prompt"`
}

// maxConfigBytes bounds the configuration file read.
const maxConfigBytes = 1 << 20

// LoadConfig reads and checks a configuration file, filling in defaults.
func LoadConfig(path string) (Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("read config: %w", err)
	}
	if len(b) > maxConfigBytes {
		return Config{}, fmt.Errorf("config %s is over %d bytes", path, maxConfigBytes)
	}
	return ParseConfig(b)
}

// ParseConfig parses and checks a configuration, filling in defaults.
func ParseConfig(b []byte) (Config, error) {
	var c Config
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		return Config{}, fmt.Errorf("parse config: %w", err)
	}
	c.defaults()
	if err := c.check(); err != nil {
		return Config{}, fmt.Errorf("config: %w", err)
	}
	return c, nil
}

func (c *Config) defaults() {
	c.PrickleURL = strings.TrimRight(c.PrickleURL, "/")
	if c.Mode == "" {
		c.Mode = ModeWebhook
	}
	if c.Webhook.Listen == "" {
		c.Webhook.Listen = "127.0.0.1:8765"
	}
	if c.Webhook.Path == "" {
		c.Webhook.Path = "/prickle"
	}
	if c.Pull.WaitSeconds == 0 {
		c.Pull.WaitSeconds = 25
	}
	if c.Concurrency == 0 {
		c.Concurrency = 2
	}
	if c.RunTimeout == 0 {
		c.RunTimeout = 30 * time.Minute
	}
	if c.Grace == 0 {
		c.Grace = 10 * time.Second
	}
	if c.LogDir == "" {
		c.LogDir = "~/.prickle-runner/logs"
	}
	c.LogDir = absolute(expandHome(c.LogDir))
	if c.StateDir == "" {
		c.StateDir = "~/.prickle-runner/state"
	}
	c.StateDir = absolute(expandHome(c.StateDir))
	c.AgentTokenFile = expandHome(c.AgentTokenFile)
	c.Webhook.SecretFile = expandHome(c.Webhook.SecretFile)
	for slug, p := range c.Projects {
		if p.Template == "" {
			p.Template = TemplateClaude
		}
		if p.Template == TemplateClaude && p.AllowedTools == nil {
			p.AllowedTools = DefaultAllowedTools
		}
		if p.AllowedTools == nil {
			p.AllowedTools = agentAllowedTools[p.Template]
		}
		if p.Prompt == "" {
			p.Prompt = DefaultPrompt
		}
		if p.ResumePrompt == "" {
			p.ResumePrompt = DefaultResumePrompt
		}
		p.Dir = absolute(expandHome(p.Dir))
		c.Projects[slug] = p
	}
}

func (c Config) check() error {
	u, err := url.Parse(c.PrickleURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("prickle_url %q must be an absolute http(s) URL", c.PrickleURL)
	}
	if c.Mode != ModeWebhook && c.Mode != ModePull {
		return fmt.Errorf("mode %q must be webhook or pull", c.Mode)
	}
	if c.Mode == ModeWebhook && !strings.HasPrefix(c.Webhook.Path, "/") {
		return fmt.Errorf("webhook.path %q must start with /", c.Webhook.Path)
	}
	if c.Pull.WaitSeconds < 0 || c.Pull.WaitSeconds > 25 {
		return fmt.Errorf("pull.wait_seconds %d must be 0 to 25", c.Pull.WaitSeconds)
	}
	if c.Concurrency < 1 || c.Concurrency > 64 {
		return fmt.Errorf("concurrency %d must be 1 to 64", c.Concurrency)
	}
	if c.RunTimeout < time.Second || c.Grace < 0 {
		return errors.New("run_timeout must be at least 1s and grace not negative")
	}
	if err := c.Prices.check(); err != nil {
		return err
	}
	if len(c.Projects) == 0 {
		return errors.New("projects: name at least one project (or \"*\") with its dir")
	}
	for slug, p := range c.Projects {
		if p.Dir == "" {
			return fmt.Errorf("project %s: dir is required", slug)
		}
		switch p.Template {
		case TemplateClaude, TemplateCodex, TemplateQwen, TemplateGemini, TemplateCopilot, TemplateOpencode:
		case TemplateCommand:
			if len(p.Command) == 0 {
				return fmt.Errorf("project %s: the command template needs command: [program, args...]", slug)
			}
		default:
			return fmt.Errorf("project %s: template %q must be claude, codex, qwen, gemini, copilot, opencode or command", slug, p.Template)
		}
	}
	return nil
}

// MCPURL is the MCP endpoint of the configured Prickle.
func (c Config) MCPURL() string { return c.PrickleURL + "/mcp" }

// Project returns how runs of the project start: its own entry, else "*".
func (c Config) Project(slug string) (Project, bool) {
	if p, ok := c.Projects[slug]; ok {
		return p, true
	}
	p, ok := c.Projects["*"]
	return p, ok
}

// Token reads the agent token from the file, the environment variable or
// the config, in that order; with none of them set, the token
// `prickle-runner login` kept in the state folder for this Prickle
// (ErrNotJoined when there is none).
func (c Config) Token() (string, error) {
	if !c.TokenConfigured() {
		j, err := LoadJoined(c.StateDir, c.PrickleURL)
		if err != nil {
			return "", fmt.Errorf("agent token: none of agent_token_file, agent_token_env, agent_token is set, and %w", err)
		}
		return j.Token, nil
	}
	return secretFrom("agent token", c.AgentTokenFile, c.AgentTokenEnv, c.AgentToken)
}

// TokenConfigured says whether the config names the agent token itself.
func (c Config) TokenConfigured() bool {
	return c.AgentTokenFile != "" || c.AgentTokenEnv != "" || c.AgentToken != ""
}

// WebhookSecret reads the wake webhook's signing secret the same way.
func (c Config) WebhookSecret() (string, error) {
	return secretFrom("webhook secret", c.Webhook.SecretFile, c.Webhook.SecretEnv, c.Webhook.Secret)
}

func secretFrom(what, file, env, inline string) (string, error) {
	switch {
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("read %s: %w", what, err)
		}
		if s := strings.TrimSpace(string(b)); s != "" {
			return s, nil
		}
		return "", fmt.Errorf("%s file %s is empty", what, file)
	case env != "":
		if s := strings.TrimSpace(os.Getenv(env)); s != "" {
			return s, nil
		}
		return "", fmt.Errorf("%s: environment variable %s is empty", what, env)
	case inline != "":
		return inline, nil
	}
	return "", fmt.Errorf("%s: set a file, an environment variable or a value", what)
}

// absolute makes a relative path absolute against the runner's working
// directory, so a run started in its project's dir still finds its MCP config and log.
func absolute(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

func expandHome(p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, rest)
		}
	}
	return p
}
