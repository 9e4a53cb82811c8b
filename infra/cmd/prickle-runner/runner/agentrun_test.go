package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/useprickle/prickle/shared/domain/wakeup"
)

func TestAgentUsage(t *testing.T) {
	qwenOut := `[{"type":"system","subtype":"init","session_id":"s1"},{"type":"assistant","message":{}},` +
		`{"type":"result","subtype":"success","session_id":"s1","num_turns":2,"duration_ms":1500,"usage":{"input_tokens":462,"output_tokens":20,"total_tokens":482},` +
		`"stats":{"models":{"mock-model":{"tokens":{}}}}}]`
	geminiOut := "warming up\n{\n  \"session_id\": \"g1\",\n  \"response\": \"Done.\",\n  \"stats\": {\n    \"models\": {\n" +
		"      \"gemini-2.5-flash\": {\"api\": {\"totalRequests\": 2}, \"tokens\": {\"input\": 200, \"prompt\": 230, \"candidates\": 12, \"total\": 242, \"thoughts\": 3}}\n    }\n  }\n}\n"
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "usage.json"), []byte(`{"modelMetrics":{"mock-model":{"requests":{"count":4,"cost":0},`+
		`"usage":{"inputTokens":450,"outputTokens":40,"cacheReadTokens":0,"cacheWriteTokens":0}}},"lastCallInputTokens":110}`), 0o600); err != nil {
		t.Fatal(err)
	}
	copilotOut := `{"type":"session.start"}` + "\n" + `{"type":"result","sessionId":"c1","exitCode":0,"usage":{"premiumRequests":0}}` + "\n"
	tests := []struct {
		cli  string
		out  string
		want agentUsage
	}{
		{TemplateQwen, qwenOut, agentUsage{SessionID: "s1", Cumulative: true, Model: "mock-model", Turns: 2, DurationMS: 1500, Tokens: tokens{462, 20}}},
		{TemplateGemini, geminiOut, agentUsage{SessionID: "g1", Model: "gemini-2.5-flash", Turns: 2, Tokens: tokens{230, 15}}},
		{TemplateCopilot, copilotOut, agentUsage{SessionID: "c1", Cumulative: true, TurnsCumulative: true, Model: "mock-model", Turns: 4, Tokens: tokens{450, 40}}},
	}
	for _, tt := range tests {
		got, ok := agentTemplates[tt.cli].usage([]byte(tt.out), &agentRun{runDir: dir})
		if !ok || got != tt.want {
			t.Errorf("%s: %+v %v, want %+v", tt.cli, got, ok, tt.want)
		}
		if _, ok := agentTemplates[tt.cli].usage([]byte("Error: no such session\n"), &agentRun{runDir: t.TempDir()}); ok {
			t.Errorf("%s: usage read from an error", tt.cli)
		}
	}
}

// fakeCLI writes a script standing for a CLI: it records its argv, checks
// the settings it was given and prints out (whose $N is the run's number).
func fakeCLI(t *testing.T, dir, out string) string {
	t.Helper()
	path := filepath.Join(dir, "fake-cli")
	script := "#!/bin/sh\necho \"$@\" >> " + filepath.Join(dir, "argv.txt") + "\n" +
		"n=$(wc -l < " + filepath.Join(dir, "argv.txt") + ")\n" +
		"ls -l \"$QWEN_HOME/settings.json\" \"$GEMINI_CLI_HOME/.gemini/settings.json\" \"$COPILOT_HOME/settings.json\" 2>/dev/null | cut -c1-10 >> " + filepath.Join(dir, "modes.txt") + "\n" +
		"for a in \"$@\"; do case $a in @*) ls -l \"${a#@}\" | cut -c1-10 >> " + filepath.Join(dir, "modes.txt") + "; cat \"${a#@}\" > " + filepath.Join(dir, "mcp-seen.json") + ";; esac; done\n" +
		"prev=\"\"; for a in \"$@\"; do if [ \"$prev\" = --usage-output-file ]; then echo '{\"modelMetrics\":{\"m\":{\"requests\":{\"count\":'$n'},\"usage\":{\"inputTokens\":'$((n*100))',\"outputTokens\":'$((n*10))'}}}}' > \"$a\"; fi; prev=$a; done\n" +
		"printf '%s' \"" + strings.ReplaceAll(out, `"`, `\"`) + "\" | sed \"s/NN/$n/g\"\n" // no newline at its end, as gemini
	if err := os.WriteFile(path, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	return path
}

// Two runs of a task: the first starts the session with the new prompt,
// the second resumes it with the resume prompt; the settings holding the
// token are 0600 while the run goes and gone after; each run reports its
// own tokens (a cumulative count less the previous run's).
func TestAgentRunResumesAndCountsEachRun(t *testing.T) {
	outs := map[string]string{
		TemplateQwen:    `[{"type":"result","session_id":"x","usage":{"input_tokens":NN00,"output_tokens":NN0}}]`,
		TemplateGemini:  `{"session_id":"x","stats":{"models":{"g":{"tokens":{"prompt":100,"candidates":10}}}}}`,
		TemplateCopilot: `{"type":"result","sessionId":"x"}`,
	}
	for cli, out := range outs {
		t.Run(cli, func(t *testing.T) {
			dir := t.TempDir()
			user := filepath.Join(dir, "user")
			userDir := agentTemplates[cli].userDir(func(k string) string { return map[string]string{"HOME": user}[k] })
			if err := os.MkdirAll(userDir, 0o700); err != nil {
				t.Fatal(err)
			}
			own := `{"security": {"auth": {"selectedType": "openai"}}, // mine
  "model": {"name": "my-model"}}`
			if err := os.WriteFile(filepath.Join(userDir, "settings.json"), []byte(own), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(userDir, "oauth_creds.json"), []byte(`{}`), 0o600); err != nil {
				t.Fatal(err)
			}
			session := filepath.Join(dir, "session")
			if err := os.MkdirAll(session, 0o700); err != nil {
				t.Fatal(err)
			}
			program := fakeCLI(t, dir, out)
			var outputs []string
			for i, prompt := range []string{"first", "second"} {
				r := &agentRun{program: program, self: "/bin/prickle-runner", mcpURL: "http://prickle/mcp", runToken: "prk_r_secret", dir: dir,
					cliHome: filepath.Join(session, cli+"-home"), userDir: userDir, args: []string{"--extra"}}
				e := agentEnv{MCPURL: r.mcpURL, RunToken: r.runToken, RunID: "run_" + prompt, SessionDir: session, NewPrompt: "new " + prompt, ResumePrompt: "resume " + prompt}
				var stdout bytes.Buffer
				log := slog.New(slog.NewJSONHandler(&stdout, nil))
				if code := agentRunWith(context.Background(), agentTemplates[cli], r, e, log, &stdout, io.Discard); code != 0 {
					t.Fatalf("run %d: exit %d: %s", i, code, stdout.String())
				}
				outputs = append(outputs, stdout.String())
				for _, f := range r.secretFiles {
					if _, err := os.Stat(f); err == nil {
						t.Errorf("run %d: %s left after the run", i, f)
					}
				}
				if entries, _ := filepath.Glob(filepath.Join(session, "run-*")); len(entries) != 0 {
					t.Errorf("run dirs left: %v", entries)
				}
			}
			argv, _ := os.ReadFile(filepath.Join(dir, "argv.txt"))
			lines := strings.Split(strings.TrimSpace(string(argv)), "\n")
			if len(lines) != 2 || !strings.HasSuffix(lines[0], "new first") || !strings.HasSuffix(lines[1], "resume second") || !strings.Contains(lines[0], "--extra") {
				t.Fatalf("argv: %q", lines)
			}
			var s agentSession
			if ok, err := readJSON(filepath.Join(session, "agent-"+cli+".json"), &s); !ok || err != nil || s.Runs != 2 {
				t.Fatalf("session %+v %v", s, err)
			}
			if !strings.Contains(lines[0], s.ID) || !strings.Contains(lines[1], s.ID) {
				t.Errorf("one session, started then resumed: %q (id %s)", lines, s.ID)
			}
			modes, _ := os.ReadFile(filepath.Join(dir, "modes.txt"))
			for _, m := range strings.Fields(string(modes)) {
				if m != "-rw-------" {
					t.Errorf("a settings file is %s, want -rw-------", m)
				}
			}
			if len(modes) == 0 {
				t.Error("no settings file seen")
			}
			for i, o := range outputs {
				u := usageLine(t, o)
				if u.InputTokens != 100 || u.OutputTokens != 10 || (cli == TemplateCopilot && u.Turns != 1) {
					t.Errorf("run %d reported %+v, want its own 100 in, 10 out", i, u)
				}
			}
			// The user's own files: read, linked, never written.
			if b, _ := os.ReadFile(filepath.Join(userDir, "settings.json")); string(b) != own {
				t.Errorf("the user's settings changed: %s", b)
			}
		})
	}
}

func usageLine(t *testing.T, out string) Usage {
	t.Helper()
	if u := templateUsage(TemplateGemini, []byte(out)); u == nil {
		t.Errorf("the runner reads no usage in %s", out)
	}
	for _, l := range strings.Split(out, "\n") {
		var line struct {
			Msg   string `json:"msg"`
			Usage Usage  `json:"usage"`
		}
		if json.Unmarshal([]byte(l), &line) == nil && line.Msg == AgentUsageMsg {
			if u := templateUsage(TemplateQwen, []byte(l)); u == nil || *u != line.Usage {
				t.Errorf("the runner reads %+v", u)
			}
			return line.Usage
		}
	}
	t.Fatalf("no usage line in %s", out)
	return Usage{}
}

// What qwen and gemini read as settings while the run goes: the user's own
// with Prickle's MCP server (the run token) and the gate.
func TestAgentSettings(t *testing.T) {
	for _, cli := range []string{TemplateQwen, TemplateGemini, TemplateCopilot} {
		dir := t.TempDir()
		user := filepath.Join(dir, "user")
		if err := os.MkdirAll(user, 0o700); err != nil {
			t.Fatal(err)
		}
		_ = os.WriteFile(filepath.Join(user, "settings.json"), []byte(`{"model":{"name":"mine"},"hooks":{"PreToolUse":[]}}`), 0o600)
		r := &agentRun{self: "/bin/prickle-runner", mcpURL: "http://p/mcp", runToken: "prk_r_x", cliHome: filepath.Join(dir, "home"), userDir: user, runDir: dir}
		if err := agentTemplates[cli].prepare(r); err != nil {
			t.Fatal(err)
		}
		path := map[string]string{TemplateQwen: filepath.Join(r.cliHome, "settings.json"), TemplateGemini: filepath.Join(r.cliHome, ".gemini", "settings.json"),
			TemplateCopilot: filepath.Join(dir, "mcp.json")}[cli]
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), `"Authorization":"Bearer prk_r_x"`) {
			t.Errorf("%s: no run token: %s", cli, b)
		}
		if cli != TemplateCopilot && (!strings.Contains(string(b), `"name":"mine"`) || !strings.Contains(string(b), "hook --cli "+cli)) {
			t.Errorf("%s: settings %s", cli, b)
		}
		if cli == TemplateCopilot {
			hooks, _ := os.ReadFile(filepath.Join(r.cliHome, "settings.json"))
			if !strings.Contains(string(hooks), `"preToolUse"`) || strings.Contains(string(hooks), "prk_r_x") {
				t.Errorf("copilot hooks %s", hooks)
			}
		}
	}
}

func TestAgentCommand(t *testing.T) {
	p := Project{Dir: "/w", Template: TemplateGemini, Program: "/opt/gemini", Args: []string{"-m", "gemini-2.5-flash"}, Prompt: DefaultPrompt,
		ResumePrompt: DefaultResumePrompt, AllowedTools: agentAllowedTools[TemplateGemini]}
	w := wakeup.Payload{TaskID: "tsk_1", RunID: "run_1", Reason: "task_routed", RunToken: "prk_r_1"}
	c, err := BuildCommand(p, Launch{MCPURL: "http://p/mcp", Project: "web", Wake: w, Self: "/bin/prickle-runner", SessionDir: "/s",
		Asked: &Asked{Call: Call{Name: "run_shell_command", Input: json.RawMessage(`{"command":"make"}`)}}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/bin/prickle-runner", AgentRunCommand, "--cli", "gemini", "--program", "/opt/gemini", "--", "-m", "gemini-2.5-flash"}
	if strings.Join(c.Argv, " ") != strings.Join(want, " ") {
		t.Errorf("argv %q", c.Argv)
	}
	env := strings.Join(c.Env, "\n")
	for _, s := range []string{"PRICKLE_RESUME_PROMPT=Prickle woke you again for task tsk_1", `run_shell_command {"command":"make"}`, "PRICKLE_ALLOWED_TOOLS=mcp_prickle_read_room,",
		"PRICKLE_NEW_PROMPT=Prickle woke you again"} {
		if !strings.Contains(env, s) {
			t.Errorf("env lacks %q", s)
		}
	}
	cfg, err := ParseConfig([]byte("prickle_url: http://p\nprojects:\n  web: {dir: /w, template: qwen}\n"))
	if err != nil || strings.Join(cfg.Projects["web"].AllowedTools, ",") != strings.Join(agentAllowedTools[TemplateQwen], ",") {
		t.Errorf("qwen config %+v %v", cfg.Projects["web"], err)
	}
}
