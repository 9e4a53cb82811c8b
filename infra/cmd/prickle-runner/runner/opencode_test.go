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
)

// Lines of `opencode run --format json` as opencode 1.18.33 prints them.
const opencodeOut = `{"type":"step_start","timestamp":1,"sessionID":"ses_daf8c1a2","part":{"type":"step-start"}}
{"type":"tool_use","timestamp":2,"sessionID":"ses_daf8c1a2","part":{"type":"tool","tool":"bash","callID":"call_2_9769","state":{"status":"completed"}}}
{"type":"step_finish","timestamp":3,"sessionID":"ses_daf8c1a2","part":{"reason":"tool-calls","type":"step-finish","tokens":{"total":112,"input":102,"output":10,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0.000456}}
{"type":"step_start","timestamp":4,"sessionID":"ses_daf8c1a2","part":{"type":"step-start"}}
{"type":"text","timestamp":5,"sessionID":"ses_daf8c1a2","part":{"type":"text","text":"Done."}}
{"type":"step_finish","timestamp":6,"sessionID":"ses_daf8c1a2","part":{"reason":"stop","type":"step-finish","tokens":{"total":140,"input":90,"output":12,"reasoning":3,"cache":{"write":5,"read":30}},"cost":0.0005}}
`

func TestOpencodeUsage(t *testing.T) {
	o := opencodeTemplate
	u, ok := o.usage([]byte("INFO starting\n"+opencodeOut), &agentRun{model: "mock/mock-model"})
	want := agentUsage{SessionID: "ses_daf8c1a2", Model: "mock/mock-model", Turns: 2, Tokens: tokens{102 + 90 + 30 + 5, 10 + 12 + 3}, CostUSD: 0.000456 + 0.0005}
	if !ok || u != want {
		t.Errorf("%+v %v, want %+v", u, ok, want)
	}
	if _, ok := o.usage([]byte("Error: Session not found\n"), &agentRun{}); ok {
		t.Error("usage read from an error")
	}
	if o.sessionOf([]byte(opencodeOut)) != "ses_daf8c1a2" || o.sessionOf([]byte("Error\n")) != "" {
		t.Error("sessionOf")
	}
	first := strings.Join(strings.Split(opencodeOut, "\n")[:3], "\n")
	if !o.finished([]byte(opencodeOut)) || o.finished([]byte(first)) {
		t.Error("finished: only once a step ended the turn")
	}
	if modelArg([]string{"--print-logs", "-m", "anthropic/claude-sonnet-4"}) != "anthropic/claude-sonnet-4" || modelArg([]string{"--model=a/b"}) != "a/b" || modelArg(nil) != "" {
		t.Error("modelArg")
	}
}

// The run's config: the user's own global config (comments allowed; read,
// never written) with Prickle's MCP server (the run token, 0600), the gate
// plugin and every permission denied until the plugin gives them back; the
// task's config dir opencode takes as installed; the user's sign-in linked.
func TestOpencodeRunConfig(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	userCfg := filepath.Join(home, ".config", "opencode")
	if err := os.MkdirAll(userCfg, 0o700); err != nil {
		t.Fatal(err)
	}
	own := `{
  // mine
  "$schema": "https://opencode.ai/config.json",
  "model": "anthropic/claude-sonnet-4",
  "permission": {"bash": "ask"},
  "mcp": {"other": {"type": "local", "command": ["x"]}}
}`
	if err := os.WriteFile(filepath.Join(userCfg, "opencode.json"), []byte(own), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("OPENCODE_CONFIG", "")
	t.Setenv("OPENCODE_CONFIG_CONTENT", `{"share":"auto","small_model":"anthropic/claude-haiku-4-5"}`)
	t.Setenv("OPENCODE_PERMISSION", `{"edit":"deny"}`)
	t.Setenv("OPENCODE_CONFIG_DIR", "")
	r := &agentRun{self: "/bin/prickle-runner", mcpURL: "http://p/mcp", runToken: "prk_r_x", cliHome: filepath.Join(dir, "task"), runDir: filepath.Join(dir, "run")}
	if err := opencodeTemplate.prepare(r); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(r.runDir, "opencode.json")
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the run's config: %v %v", fi, err)
	}
	var cfg struct {
		Model      string                     `json:"model"`
		Permission map[string]string          `json:"permission"`
		Plugin     []string                   `json:"plugin"`
		MCP        map[string]json.RawMessage `json:"mcp"`
	}
	b, _ := os.ReadFile(path)
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Model != "anthropic/claude-sonnet-4" || r.model != cfg.Model || len(cfg.Permission) != 1 || cfg.Permission["*"] != "deny" || cfg.MCP["other"] == nil {
		t.Errorf("config %s", b)
	}
	if !strings.Contains(string(cfg.MCP[PrickleServer]), `"Authorization":"Bearer prk_r_x"`) || !strings.Contains(string(cfg.MCP[PrickleServer]), `"type":"remote"`) {
		t.Errorf("prickle's MCP server %s", cfg.MCP[PrickleServer])
	}
	if len(cfg.Plugin) != 1 || !strings.HasPrefix(cfg.Plugin[0], "file://"+r.runDir) {
		t.Fatalf("plugin %q", cfg.Plugin)
	}
	plugin, _ := os.ReadFile(strings.TrimPrefix(cfg.Plugin[0], "file://"))
	if !strings.Contains(string(b), `"small_model":"anthropic/claude-haiku-4-5"`) || !strings.Contains(string(b), `"share":"disabled"`) {
		t.Errorf("OPENCODE_CONFIG_CONTENT not merged, or share left on: %s", b)
	}
	for _, s := range []string{`["/bin/prickle-runner","hook","--cli","opencode"]`, `const RESTORE = {"bash":"ask","edit":"deny"};`, `"tool.execute.before"`} {
		if !strings.Contains(string(plugin), s) {
			t.Errorf("plugin lacks %s", s)
		}
	}
	env := strings.Join(r.env, "\n")
	for _, s := range []string{"OPENCODE_CONFIG=" + path, "XDG_DATA_HOME=" + filepath.Join(r.cliHome, "data"), "XDG_CONFIG_HOME=" + filepath.Join(r.cliHome, "config"),
		"OPENCODE_PERMISSION=\n", "OPENCODE_CONFIG_CONTENT=\n", "OPENCODE_CONFIG_DIR="} {
		if !strings.Contains(env, s) {
			t.Errorf("env lacks %s", s)
		}
	}
	var lock struct {
		Packages map[string]struct {
			Dependencies map[string]string `json:"dependencies"`
		} `json:"packages"`
	}
	seeded := filepath.Join(r.cliHome, "config", "opencode")
	lb, _ := os.ReadFile(filepath.Join(seeded, "package-lock.json"))
	if json.Unmarshal(lb, &lock) != nil || lock.Packages[""].Dependencies["@opencode-ai/plugin"] == "" {
		t.Errorf("package-lock.json %s", lb)
	}
	if fi, err := os.Stat(filepath.Join(seeded, "node_modules")); err != nil || !fi.IsDir() {
		t.Error("no node_modules: opencode would install into it")
	}
	if b, _ := os.ReadFile(filepath.Join(userCfg, "opencode.json")); string(b) != own {
		t.Errorf("the user's config changed: %s", b)
	}
	if entries, _ := os.ReadDir(userCfg); len(entries) != 1 {
		t.Errorf("files written into the user's config dir: %v", entries)
	}
	if opencodeTemplate.userDir(os.Getenv) != filepath.Join(home, ".local", "share", "opencode") {
		t.Error("userDir")
	}
}

// Two runs of a task: the first starts a session (opencode names it in its
// events), the second resumes it with -s and the resume prompt; each
// reports its own tokens and opencode's cost.
func TestOpencodeRunResumes(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("OPENCODE_CONFIG", "")
	userData := filepath.Join(home, ".local", "share", "opencode")
	if err := os.MkdirAll(userData, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(userData, "auth.json"), []byte(`{}`), 0o600); err != nil {
		t.Fatal(err)
	}
	program := filepath.Join(dir, "opencode")
	script := "#!/bin/sh\necho \"$@\" >> " + filepath.Join(dir, "argv.txt") + "\nls -l \"$XDG_DATA_HOME/opencode/auth.json\" >> " + filepath.Join(dir, "auth.txt") + "\n" +
		"cat <<'EOF'\n" + opencodeOut + "EOF\n"
	if err := os.WriteFile(program, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	session := filepath.Join(dir, "session")
	if err := os.MkdirAll(session, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PRICKLE_SESSION_DIR", session)
	for i, prompt := range []string{"first", "second"} {
		o := opencodeTemplate
		r := &agentRun{program: program, self: "/bin/prickle-runner", mcpURL: "http://prickle/mcp", runToken: "prk_r_secret", dir: dir,
			cliHome: filepath.Join(session, "opencode-home"), userDir: o.userDir(os.Getenv)}
		e := agentEnv{MCPURL: r.mcpURL, RunToken: r.runToken, RunID: "run_" + prompt, SessionDir: session, NewPrompt: "new " + prompt, ResumePrompt: "resume " + prompt}
		var stdout bytes.Buffer
		if code := agentRunWith(context.Background(), o, r, e, slog.New(slog.NewJSONHandler(&stdout, nil)), &stdout, io.Discard); code != 0 {
			t.Fatalf("run %d: exit %d: %s", i, code, stdout.String())
		}
		u := usageLine(t, stdout.String())
		if u.InputTokens != 227 || u.OutputTokens != 25 || u.CostUSD != 0.000956 || u.Turns != 2 {
			t.Errorf("run %d reported %+v", i, u)
		}
		for _, f := range r.secretFiles {
			if _, err := os.Stat(f); err == nil {
				t.Errorf("%s left after the run", f)
			}
		}
	}
	argv, _ := os.ReadFile(filepath.Join(dir, "argv.txt"))
	lines := strings.Split(strings.TrimSpace(string(argv)), "\n")
	if len(lines) != 2 || lines[0] != "run --format json --auto new first" || lines[1] != "run --format json --auto -s ses_daf8c1a2 resume second" {
		t.Fatalf("argv %q", lines)
	}
	if auth, _ := os.ReadFile(filepath.Join(dir, "auth.txt")); strings.Count(string(auth), "auth.json -> "+filepath.Join(userData, "auth.json")) != 2 {
		t.Errorf("the user's sign-in is not linked: %s", auth)
	}
}

func TestOpencodeProject(t *testing.T) {
	cfg, err := ParseConfig([]byte("prickle_url: http://p\nprojects:\n  web: {dir: /w, template: opencode, args: [-m, anthropic/claude-sonnet-4]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.Projects["web"]
	if strings.Join(p.AllowedTools, ",") != strings.Join(agentAllowedTools[TemplateOpencode], ",") || !strings.Contains(strings.Join(p.AllowedTools, ","), "prickle_accept_task") {
		t.Errorf("allowed %q", p.AllowedTools)
	}
	c, err := BuildCommand(p, Launch{MCPURL: "http://p/mcp", Project: "web", Self: "/bin/prickle-runner", SessionDir: "/s"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "/bin/prickle-runner agent-run --cli opencode --program opencode -- -m anthropic/claude-sonnet-4"; strings.Join(c.Argv, " ") != want {
		t.Errorf("argv %q", c.Argv)
	}
}
