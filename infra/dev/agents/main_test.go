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
	// signedOut lists the CLIs whose status says signed out; "?" marks one that cannot tell.
	signed := func(out ...string) func(string, string) (bool, bool) {
		return func(tmpl, _ string) (bool, bool) {
			for _, o := range out {
				if o == tmpl {
					return false, true
				}
				if o == "?"+tmpl {
					return false, false
				}
			}
			return true, true
		}
	}
	for _, tc := range []struct {
		asked, want string
		path, out   []string
		checked     bool
		fails       string
	}{
		{"", "claude", []string{"claude", "codex"}, nil, true, ""},
		{"", "codex", []string{"codex"}, nil, true, ""},
		{"codex", "codex", []string{"claude", "codex"}, nil, true, ""},
		{"", "codex", []string{"claude", "codex"}, []string{"claude"}, true, ""},
		{"", "codex", []string{"codex"}, []string{"?codex"}, false, ""},
		{"", "", []string{"claude"}, []string{"claude"}, false, "claude is on your PATH but not signed in: run `claude` once"},
		{"codex", "", []string{"codex"}, []string{"codex"}, false, "codex is on your PATH but not signed in: run `codex login`"},
		{"", "", nil, nil, false, "neither claude (Claude Code) nor codex is on your PATH"},
		{"claude", "", []string{"codex"}, nil, false, "claude is not on your PATH"},
		{"gemini", "", []string{"claude"}, nil, false, "-template is claude or codex"},
	} {
		got, _, checked, err := pickTemplate(tc.asked, on(tc.path...), signed(tc.out...))
		if tc.fails != "" {
			if err == nil || !strings.Contains(err.Error(), tc.fails) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%q with %v, signed out %v: error %v, want one line with %q", tc.asked, tc.path, tc.out, err, tc.fails)
			}
			continue
		}
		if err != nil || got != tc.want || checked != tc.checked {
			t.Errorf("%q with %v, signed out %v: %q (checked %v), %v; want %q (checked %v)", tc.asked, tc.path, tc.out, got, checked, err, tc.want, tc.checked)
		}
	}
}

// TestSignedIn reads the CLIs' own answers: claude auth status's JSON, codex login status's exit.
func TestSignedIn(t *testing.T) {
	dir := t.TempDir()
	script := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		tmpl, body string
		ok, known  bool
	}{
		{"claude", `echo '{"loggedIn": true, "authMethod": "claude.ai", "apiProvider": "firstParty"}'`, true, true},
		{"claude", `echo '{"loggedIn": false, "authMethod": "none", "apiProvider": "firstParty"}'`, false, true},
		{"claude", `echo '{"loggedIn": false, "apiProvider": "bedrock"}'`, false, false},
		{"claude", `echo 'error: unknown command auth' >&2; exit 1`, false, false},
		{"codex", `echo 'Logged in using ChatGPT'`, true, true},
		{"codex", `echo 'Not logged in'; exit 1`, false, false},
	} {
		ok, known := signedIn(tc.tmpl, script(tc.tmpl, tc.body))
		if ok != tc.ok || known != tc.known {
			t.Errorf("%s %q: ok %v known %v; want %v %v", tc.tmpl, tc.body, ok, known, tc.ok, tc.known)
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
