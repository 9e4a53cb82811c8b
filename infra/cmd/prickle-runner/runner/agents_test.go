package runner

import (
	"reflect"
	"slices"
	"testing"
	"time"
)

// TestTemplateValues pins what each template gives out as plain values.
func TestTemplateValues(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	cases := []struct {
		t                  agentTemplate
		name, program      string
		edits              bool
		hook, gate         time.Duration
		logins             []string
		userDir, userDirOf string
		userEnv            map[string]string
		shells             []string
	}{
		{qwenTemplate, TemplateQwen, "qwen", false, 55 * time.Second, 50 * time.Second, []string{"oauth_creds.json", "installation_id"},
			"/u/.qwen", "/q", map[string]string{"QWEN_HOME": "/q"}, []string{"run_shell_command"}},
		{geminiTemplate, TemplateGemini, "gemini", true, 120 * time.Second, 100 * time.Second,
			[]string{"oauth_creds.json", "google_accounts.json", "installation_id"}, "/u/.gemini", "/g/.gemini", map[string]string{"GEMINI_CLI_HOME": "/g"}, []string{"run_shell_command"}},
		{copilotTemplate, TemplateCopilot, "copilot", true, 120 * time.Second, 100 * time.Second, nil,
			"/u/.copilot", "/c", map[string]string{"COPILOT_HOME": "/c"}, []string{"bash", "write_bash"}},
		{opencodeTemplate, TemplateOpencode, "opencode", true, 120 * time.Second, 100 * time.Second, []string{"auth.json"},
			"/u/.local/share/opencode", "/d/opencode", map[string]string{"XDG_DATA_HOME": "/d"}, []string{"bash"}},
	}
	for _, c := range cases {
		cli := c.t.(agentCLI)
		if cli.name() != c.name || c.t.program() != c.program || cli.edits() != c.edits || cli.hookTimeout() != c.hook ||
			cli.gateLimit() != c.gate || !reflect.DeepEqual(c.t.loginFiles(), c.logins) {
			t.Errorf("%s: name %q program %q edits %v hook %s gate %s logins %q", c.name, cli.name(), c.t.program(), cli.edits(),
				cli.hookTimeout(), cli.gateLimit(), c.t.loginFiles())
		}
		if got := c.t.userDir(env(map[string]string{"HOME": "/u"})); got != c.userDir {
			t.Errorf("%s: user dir %q, want %q", c.name, got, c.userDir)
		}
		cc := c.t.(claimingCLI)
		for _, tool := range append([]string{"read_file", "view", "edit", "write_file", "shell"}, c.shells...) {
			if want := slices.Contains(c.shells, tool); cc.shellTool(tool) != want {
				t.Errorf("%s: shellTool(%q) = %v, want %v", c.name, tool, !want, want)
			}
		}
		c.userEnv["HOME"] = "/u"
		if got := c.t.userDir(env(c.userEnv)); got != c.userDirOf {
			t.Errorf("%s: user dir with %v: %q, want %q", c.name, c.userEnv, got, c.userDirOf)
		}
	}
}
