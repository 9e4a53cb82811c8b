package runner

import (
	"encoding/json"
	"github.com/useprickle/prickle/shared/domain/wakeup"
	"os"
	"slices"
	"strings"
	"testing"
)

func TestBuildCommand(t *testing.T) {
	w := wakeup.Payload{TaskID: "tsk_1", RunID: "run_2", RunToken: "prk_r_secret", Reason: wakeup.ReasonStepDecided, ResumesRun: "run_1"}
	const url = "http://127.0.0.1:3000/mcp"
	base := []string{"PATH=/usr/bin", "HOME=/home/a"}
	tests := []struct {
		name  string
		p     Project
		check func(t *testing.T, c Command)
	}{
		{"claude", Project{Dir: "/src", Template: TemplateClaude, AllowedTools: []string{"Read", "mcp__prickle__get_task"}, Args: []string{"--verbose"}, Prompt: DefaultPrompt},
			func(t *testing.T, c Command) {
				if c.SessionID == "" || c.Resume {
					t.Fatalf("a task's first run starts a new session: %q resume %v", c.SessionID, c.Resume)
				}
				want := []string{"claude", "-p", Prompt(Project{Prompt: DefaultPrompt}, w), "--session-id", c.SessionID,
					"--settings", "", "--mcp-config", c.MCPConfig,
					"--permission-prompt-tool", "mcp__prickle__request_step", "--allowedTools", "Read,mcp__prickle__get_task",
					"--output-format", "json", "--verbose"}
				want[6] = c.Argv[6]
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
				settings, _ := os.ReadFile(c.Argv[6])
				if !strings.Contains(string(settings), `"command":"'/opt/prickle-runner' hook"`) || strings.Contains(string(settings), "prk_r_") {
					t.Errorf("hook settings %s: the runner's own hook, and no token", settings)
				}
				if strings.Contains(strings.Join(c.Argv, " "), "prk_r_secret") {
					t.Error("the run token is on the command line")
				}
				if !slices.Contains(c.Env, "PRICKLE_ALLOWED_TOOLS=Read,mcp__prickle__get_task") {
					t.Errorf("env %q lacks the allow-list the hook reads", c.Env)
				}
			}},
		{"codex", Project{Dir: "/src", Template: TemplateCodex, Program: "/opt/codex", Args: []string{"-c", `model="o3"`}, Prompt: "task {task_id}"},
			func(t *testing.T, c Command) {
				want := []string{"/opt/prickle-runner", "codex-run", "--codex", "/opt/codex", "-c", `model="o3"`}
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
			c, err := BuildCommand(tt.p, Launch{MCPURL: url, Project: "website-v2", Wake: w, MCPDir: t.TempDir(), Base: base,
				Self: "/opt/prickle-runner", SessionDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			if c.Dir != "/src" {
				t.Errorf("dir %q", c.Dir)
			}
			for _, kv := range append(base, "PRICKLE_MCP_URL="+url, "PRICKLE_RUN_TOKEN=prk_r_secret", "PRICKLE_TASK_ID=tsk_1",
				"PRICKLE_REASON=step_decided", "PRICKLE_RESUMES_RUN=run_1", "PRICKLE_RUN_ID=run_2", "PRICKLE_PROJECT=website-v2",
				"PRICKLE_SESSION_DIR=") {
				if kv == "PRICKLE_SESSION_DIR=" {
					if !slices.ContainsFunc(c.Env, func(e string) bool { return strings.HasPrefix(e, kv) && len(e) > len(kv) }) {
						t.Errorf("env lacks %s…: %q", kv, c.Env)
					}
					continue
				}
				if !slices.Contains(c.Env, kv) {
					t.Errorf("env lacks %s: %q", kv, c.Env)
				}
			}
			tt.check(t, c)
		})
	}
}

// A task's later runs continue its Claude Code session: a run that paused on
// a call resumes bare (Claude Code asks that very call again); another
// resumes with the resume prompt, quoting the call last asked; a session
// kept for another directory, or none, starts anew.
func TestClaudeCommandSessions(t *testing.T) {
	w := wakeup.Payload{TaskID: "tsk_1", RunID: "run_3", RunToken: "prk_r_3", Reason: wakeup.ReasonStepDecided, ResumesRun: "run_2"}
	p := Project{Dir: "/src", Template: TemplateClaude, AllowedTools: DefaultAllowedTools, Prompt: DefaultPrompt, ResumePrompt: DefaultResumePrompt}
	const sid = "0b9a1f53-2f0c-4a57-9d0e-7d1c2a7f1e11"
	asked := &Asked{Call: Call{ToolUseID: "toolu_1", Name: "Bash", Input: json.RawMessage(`{"command":"git push origin main"}`)}, StepID: "stp_1", Status: "pending"}
	paused := &Call{ToolUseID: "toolu_1", Name: "Bash", Input: asked.Input}
	tests := []struct {
		name    string
		session Session
		asked   *Asked
		resume  bool
		prompt  string // the argument after -p; "" for none
	}{
		{"paused: a bare resume", Session{ID: sid, Template: TemplateClaude, Dir: "/src", Paused: paused}, asked, true, ""},
		{"ended its turn: resumed with the asked call quoted", Session{ID: sid, Template: TemplateClaude, Dir: "/src"}, asked, true,
			"Prickle woke you again for task tsk_1 (step_decided). The last call you asked your owner about: Bash {\"command\":\"git push origin main\"}."},
		{"nothing asked yet", Session{ID: sid, Template: TemplateClaude, Dir: "/src"}, nil, true,
			"Prickle woke you again for task tsk_1 (step_decided). The last call you asked your owner about: none."},
		{"another directory: a new conversation told the asked call", Session{ID: sid, Template: TemplateClaude, Dir: "/elsewhere", Paused: paused}, asked, false,
			"Prickle woke you again for task tsk_1 (step_decided). The last call you asked your owner about: Bash"},
		{"no session: the first prompt", Session{}, nil, false, "Prickle woke you for task tsk_1 (step_decided)."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := BuildCommand(p, Launch{MCPURL: "http://127.0.0.1:3000/mcp", Wake: w, MCPDir: t.TempDir(), Self: "/opt/prickle-runner",
				SessionDir: t.TempDir(), Session: tt.session, Asked: tt.asked})
			if err != nil {
				t.Fatal(err)
			}
			if c.Resume != tt.resume {
				t.Fatalf("resume %v, want %v: %q", c.Resume, tt.resume, c.Argv)
			}
			flag := "--session-id"
			if tt.resume {
				flag = "--resume"
			}
			i := slices.Index(c.Argv, flag)
			if i < 0 || c.Argv[i+1] != c.SessionID || (tt.resume && c.SessionID != sid) || (!tt.resume && c.SessionID == sid) {
				t.Fatalf("session %q, argv %q", c.SessionID, c.Argv)
			}
			if tt.prompt == "" {
				if c.Argv[2] != "--resume" {
					t.Errorf("a paused run resumes with no prompt: %q", c.Argv)
				}
				return
			}
			if !strings.HasPrefix(c.Argv[2], tt.prompt) {
				t.Errorf("prompt %q\nwant it to start %q", c.Argv[2], tt.prompt)
			}
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
