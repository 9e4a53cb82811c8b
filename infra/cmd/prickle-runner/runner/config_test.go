package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name, yaml, err string
		check           func(t *testing.T, c Config)
	}{
		{name: "defaults", yaml: "prickle_url: http://127.0.0.1:3000/\nagent_token: x\nprojects:\n  website-v2:\n    dir: /src/site\n",
			check: func(t *testing.T, c Config) {
				if c.Mode != ModeWebhook || c.Webhook.Listen != "127.0.0.1:8765" || c.Webhook.Path != "/prickle" || c.Pull.WaitSeconds != 25 {
					t.Errorf("mode defaults: %+v %+v %+v", c.Mode, c.Webhook, c.Pull)
				}
				if c.Concurrency != 2 || c.RunTimeout != 30*time.Minute || c.Grace != 10*time.Second {
					t.Errorf("limits: %d %s %s", c.Concurrency, c.RunTimeout, c.Grace)
				}
				p := c.Projects["website-v2"]
				if p.Template != TemplateClaude || len(p.AllowedTools) != len(DefaultAllowedTools) || p.Prompt != DefaultPrompt {
					t.Errorf("project defaults: %+v", p)
				}
				if c.MCPURL() != "http://127.0.0.1:3000/mcp" {
					t.Errorf("MCP URL %s", c.MCPURL())
				}
				if !strings.HasSuffix(c.LogDir, filepath.Join(".prickle-runner", "logs")) || strings.HasPrefix(c.LogDir, "~") {
					t.Errorf("log dir %s", c.LogDir)
				}
			}},
		{name: "pull, command and a catch-all project", yaml: "prickle_url: https://prickle.example.com\nmode: pull\npull: {wait_seconds: 10}\nconcurrency: 4\nrun_timeout: 5m\ngrace: 2s\nprojects:\n  '*':\n    dir: /w\n    template: command\n    command: [./agent.sh, --fast]\n",
			check: func(t *testing.T, c Config) {
				if c.Mode != ModePull || c.Pull.WaitSeconds != 10 || c.Concurrency != 4 || c.RunTimeout != 5*time.Minute || c.Grace != 2*time.Second {
					t.Errorf("%+v", c)
				}
				p, ok := c.Project("any-project")
				if !ok || p.Template != TemplateCommand || p.AllowedTools != nil {
					t.Errorf("catch-all: %+v %v", p, ok)
				}
			}},
		{name: "relative paths are made absolute", yaml: "prickle_url: http://x\nagent_token: x\nlog_dir: .prickle/runner-logs\nprojects: {a: {dir: src}}\n",
			check: func(t *testing.T, c Config) {
				wd, _ := os.Getwd()
				if c.LogDir != filepath.Join(wd, ".prickle", "runner-logs") || c.Projects["a"].Dir != filepath.Join(wd, "src") {
					t.Errorf("log dir %s, project dir %s: want them under %s", c.LogDir, c.Projects["a"].Dir, wd)
				}
			}},
		{name: "no URL", yaml: "projects: {a: {dir: /w}}\n", err: "prickle_url"},
		{name: "ftp URL", yaml: "prickle_url: ftp://x\nprojects: {a: {dir: /w}}\n", err: "prickle_url"},
		{name: "unknown mode", yaml: "prickle_url: http://x\nmode: carrier-pigeon\nprojects: {a: {dir: /w}}\n", err: "mode"},
		{name: "long poll too long", yaml: "prickle_url: http://x\npull: {wait_seconds: 60}\nprojects: {a: {dir: /w}}\n", err: "wait_seconds"},
		{name: "no projects", yaml: "prickle_url: http://x\n", err: "projects"},
		{name: "project without dir", yaml: "prickle_url: http://x\nprojects: {a: {template: claude}}\n", err: "dir is required"},
		{name: "command without argv", yaml: "prickle_url: http://x\nprojects: {a: {dir: /w, template: command}}\n", err: "needs command"},
		{name: "unknown template", yaml: "prickle_url: http://x\nprojects: {a: {dir: /w, template: cursor}}\n", err: "template"},
		{name: "unknown field", yaml: "prickle_url: http://x\nprojets: {a: {dir: /w}}\n", err: "projets"},
		{name: "concurrency zero after default is 2, 100 is refused", yaml: "prickle_url: http://x\nconcurrency: 100\nprojects: {a: {dir: /w}}\n", err: "concurrency"},
		{name: "webhook path", yaml: "prickle_url: http://x\nwebhook: {path: hook}\nprojects: {a: {dir: /w}}\n", err: "webhook.path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseConfig([]byte(tt.yaml))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want one naming %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, c)
		})
	}
}

func TestSecrets(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "token")
	if err := os.WriteFile(file, []byte("prk_a_fromfile\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("RUNNER_TEST_TOKEN", " prk_a_fromenv ")
	tests := []struct {
		name string
		c    Config
		want string
		err  string
	}{
		{"file first", Config{AgentTokenFile: file, AgentTokenEnv: "RUNNER_TEST_TOKEN", AgentToken: "inline"}, "prk_a_fromfile", ""},
		{"env", Config{AgentTokenEnv: "RUNNER_TEST_TOKEN", AgentToken: "inline"}, "prk_a_fromenv", ""},
		{"inline", Config{AgentToken: "inline"}, "inline", ""},
		{"empty file", Config{AgentTokenFile: empty}, "", "empty"},
		{"unset env", Config{AgentTokenEnv: "RUNNER_TEST_UNSET"}, "", "RUNNER_TEST_UNSET"},
		{"none, and no login kept", Config{StateDir: dir, PrickleURL: "http://127.0.0.1:3000"}, "", "prickle-runner login"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.c.Token()
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Token() = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestExampleConfigParses(t *testing.T) {
	c, err := LoadConfig(filepath.Join("..", "runner.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tmpl := range []string{TemplateClaude, TemplateCodex, TemplateCommand} {
		found := false
		for _, p := range c.Projects {
			found = found || p.Template == tmpl
		}
		if !found {
			t.Errorf("the example shows no %s project", tmpl)
		}
	}
}

// A woken run hands the next task on to a teammate, returns its result and
// reviews the results it asked for without asking its owner; declining or
// cancelling a task is asked.
func TestDefaultAllowListsCoordinate(t *testing.T) {
	tests := []struct{ template, prefix string }{
		{TemplateClaude, "mcp__prickle__"}, {TemplateQwen, "mcp__prickle__"}, {TemplateGemini, "mcp_prickle_"},
		{TemplateCopilot, "prickle-"}, {TemplateOpencode, "prickle_"},
	}
	for _, tt := range tests {
		t.Run(tt.template, func(t *testing.T) {
			c, err := ParseConfig([]byte("prickle_url: http://p\nprojects:\n  web: {dir: /w, template: " + tt.template + "}\n"))
			if err != nil {
				t.Fatal(err)
			}
			allowed := c.Projects["web"].AllowedTools
			for tool, want := range map[string]bool{"hand_off_task": true, "return_result": true, "review_result": true, "decline_task": false, "cancel_task": false} {
				if got := allowListed(tt.prefix+tool, allowed); got != want {
					t.Errorf("%s%s allowed without asking: %v, want %v (allow-list %v)", tt.prefix, tool, got, want, allowed)
				}
			}
		})
	}
}
