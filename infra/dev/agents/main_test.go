package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/useprickle/prickle/infra/cmd/prickle-runner/runner"
)

// TestRunnerConfig: the config make agents writes is one prickle-runner
// takes as it is: pull mode, the token from the environment (never in the
// file), every project's runs in the directory given, with the template chosen.
func TestRunnerConfig(t *testing.T) {
	dir := t.TempDir()
	b, err := runnerConfig("http://127.0.0.1:3000", "alice/writer", "codex", dir, filepath.Join(dir, ".prickle"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "prk_") {
		t.Fatalf("the config holds a token:\n%s", b)
	}
	c, err := runner.ParseConfig(b)
	if err != nil {
		t.Fatalf("prickle-runner refuses the config: %v\n%s", err, b)
	}
	if c.Mode != runner.ModePull || c.AgentTokenEnv != tokenEnv || c.Agent != "alice/writer" || c.PrickleURL != "http://127.0.0.1:3000" {
		t.Fatalf("config %+v", c)
	}
	p, ok := c.Projects["*"]
	if !ok || p.Dir != dir || p.Template != runner.TemplateCodex {
		t.Fatalf("projects %+v", c.Projects)
	}
	if !strings.HasPrefix(c.StateDir, filepath.Join(dir, ".prickle")) || !strings.HasPrefix(c.LogDir, filepath.Join(dir, ".prickle")) {
		t.Fatalf("state %s, logs %s: not in the stack's state dir", c.StateDir, c.LogDir)
	}
}

func TestPickTemplate(t *testing.T) {
	on := func(names ...string) func(string) (string, error) {
		return func(n string) (string, error) {
			for _, m := range names {
				if m == n {
					return "/usr/bin/" + n, nil
				}
			}
			return "", errors.New("not found")
		}
	}
	for _, tc := range []struct {
		asked, want string
		path        []string
		fails       string
	}{
		{"", "claude", []string{"claude", "codex"}, ""},
		{"", "codex", []string{"codex"}, ""},
		{"codex", "codex", []string{"claude", "codex"}, ""},
		{"", "", nil, "neither claude (Claude Code) nor codex is on your PATH"},
		{"claude", "", []string{"codex"}, "claude is not on your PATH"},
		{"gemini", "", []string{"claude"}, "-template is claude or codex"},
	} {
		got, _, err := pickTemplate(tc.asked, on(tc.path...))
		if tc.fails != "" {
			if err == nil || !strings.Contains(err.Error(), tc.fails) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%q with %v: error %v, want one line with %q", tc.asked, tc.path, err, tc.fails)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q with %v: %q, %v; want %q", tc.asked, tc.path, got, err, tc.want)
		}
	}
}

// TestNoStack: without a running make local, it says so in one line with what to do.
func TestNoStack(t *testing.T) {
	err := run(t.TempDir(), []string{"alice/writer"}, "", ".", "missing")
	if err == nil || !strings.Contains(err.Error(), "start `make local`") {
		t.Fatalf("err %v", err)
	}
}

func TestWritePrivate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writePrivate(path, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, %v", fi.Mode(), err)
	}
}
