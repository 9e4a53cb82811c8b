package runner

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/useprickle/prickle/shared/wake"
)

func TestBuildCommand(t *testing.T) {
	w := wake.Payload{TaskID: "tsk_1", RunID: "run_2", RunToken: "prk_r_secret", Reason: wake.ReasonStepDecided, ResumesRun: "run_1"}
	const url = "http://127.0.0.1:3000/mcp"
	base := []string{"PATH=/usr/bin", "HOME=/home/a"}
	tests := []struct {
		name  string
		p     Project
		check func(t *testing.T, c Command)
	}{
		{"claude", Project{Dir: "/src", Template: TemplateClaude, AllowedTools: []string{"Read", "mcp__prickle__get_task"}, Args: []string{"--output-format", "json"}, Prompt: DefaultPrompt},
			func(t *testing.T, c Command) {
				want := []string{"claude", "-p", Prompt(Project{Prompt: DefaultPrompt}, w), "--mcp-config", c.MCPConfig,
					"--permission-prompt-tool", "mcp__prickle__request_step", "--allowedTools", "Read,mcp__prickle__get_task", "--output-format", "json"}
				if !slices.Equal(c.Argv, want) {
					t.Errorf("argv %q\nwant %q", c.Argv, want)
				}
				fi, err := os.Stat(c.MCPConfig)
				if err != nil || fi.Mode().Perm() != 0o600 {
					t.Fatalf("MCP config %v mode %v, want 0600", err, fi.Mode())
				}
				b, _ := os.ReadFile(c.MCPConfig)
				var mc mcpConfig
				if err := json.Unmarshal(b, &mc); err != nil {
					t.Fatal(err)
				}
				s := mc.MCPServers["prickle"]
				if s.Type != "http" || s.URL != url || s.Headers["Authorization"] != "Bearer prk_r_secret" {
					t.Errorf("MCP config %s", b)
				}
				if strings.Contains(strings.Join(c.Argv, " "), "prk_r_secret") {
					t.Error("the run token is on the command line")
				}
			}},
		{"codex", Project{Dir: "/src", Template: TemplateCodex, Program: "/opt/codex", Args: []string{"-c", `model="o3"`}, Prompt: "task {task_id}"},
			func(t *testing.T, c Command) {
				want := []string{"/usr/local/bin/prickle-runner", "codex-run", "--codex", "/opt/codex", "-c", `model="o3"`}
				if !slices.Equal(c.Argv, want) || c.MCPConfig != "" {
					t.Errorf("argv %q, config %q", c.Argv, c.MCPConfig)
				}
				if !slices.Contains(c.Env, "PRICKLE_PROMPT=task tsk_1") {
					t.Errorf("env %q lacks the prompt", c.Env)
				}
				if _, err := ParseCodexArgs(c.Argv[2:]); err != nil {
					t.Errorf("codex-run does not take its own command line: %v", err)
				}
			}},
		{"command", Project{Dir: "/src", Template: TemplateCommand, Command: []string{"./agent.sh", "--x"}, Prompt: "{reason} resumes {resumes_run}"},
			func(t *testing.T, c Command) {
				if !slices.Equal(c.Argv, []string{"./agent.sh", "--x"}) || !slices.Contains(c.Env, "PRICKLE_PROMPT=step_decided resumes run_1") {
					t.Errorf("argv %q env %q", c.Argv, c.Env)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := BuildCommand(tt.p, url, "website-v2", w, t.TempDir(), base, "/usr/local/bin/prickle-runner")
			if err != nil {
				t.Fatal(err)
			}
			if c.Dir != "/src" {
				t.Errorf("dir %q", c.Dir)
			}
			for _, kv := range append(base, "PRICKLE_MCP_URL="+url, "PRICKLE_RUN_TOKEN=prk_r_secret", "PRICKLE_TASK_ID=tsk_1",
				"PRICKLE_REASON=step_decided", "PRICKLE_RESUMES_RUN=run_1", "PRICKLE_RUN_ID=run_2", "PRICKLE_PROJECT=website-v2") {
				if !slices.Contains(c.Env, kv) {
					t.Errorf("env lacks %s: %q", kv, c.Env)
				}
			}
			tt.check(t, c)
		})
	}
}

func TestRunBaseEnvDropsSecrets(t *testing.T) {
	t.Setenv("MY_AGENT_TOKEN", "prk_a_x")
	t.Setenv("MY_WAKE_SECRET", "whsec_x")
	t.Setenv("PRICKLE_RUN_TOKEN", "stale")
	t.Setenv("KEEP_ME", "1")
	env := RunBaseEnv(Config{AgentTokenEnv: "MY_AGENT_TOKEN", Webhook: Webhook{SecretEnv: "MY_WAKE_SECRET"}})
	for _, kv := range env {
		if strings.HasPrefix(kv, "MY_AGENT_TOKEN=") || strings.HasPrefix(kv, "MY_WAKE_SECRET=") || strings.HasPrefix(kv, "PRICKLE_") {
			t.Errorf("a run would see %s", kv)
		}
	}
	if !slices.Contains(env, "KEEP_ME=1") {
		t.Error("the rest of the environment is kept")
	}
}

func TestSafeName(t *testing.T) {
	for in, want := range map[string]string{"run_ab-9": "run_ab-9", "../../etc/passwd": "______etc_passwd", "": "run", "é": "_"} {
		if got := safeName(in); got != want {
			t.Errorf("safeName(%q) = %q, want %q", in, got, want)
		}
	}
}
