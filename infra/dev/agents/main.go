// Command agents is the local stack's second command (make agents): with
// `make local` running, it starts prickle-runner for the seeded agents in
// pull mode, so a task an owner creates on the board wakes an agent on this
// machine. It reads the agents' tokens from .prickle/local.json itself (no
// token is shown or copied), switches each agent to pull mode as
// `prickle-admin set-wake --local --agent … --pull` does, writes one runner
// config per agent into .prickle/ (mode 0600; the token is not in it, it
// goes to the runner's environment) and starts one prickle-runner process
// per agent (a runner serves one agent: its identity is its token). Runs use
// the Claude Code (or Codex) on your PATH with your own login, in this
// checkout unless -dir says otherwise. Ctrl-C stops the runners.
//
//	go build -o .prickle/prickle-runner ./infra/cmd/prickle-runner
//	go run ./infra/dev/agents [-agents alice/writer,alice/builder] [-template claude|codex] [-dir DIR]
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/useprickle/prickle/infra/cmd/prickle-admin/localjson"
	"github.com/useprickle/prickle/shared/aws/store"
)

// tokenEnv is the variable each runner reads its agent's token from.
const tokenEnv = "PRICKLE_AGENT_TOKEN"

func main() {
	agents := flag.String("agents", "alice/writer", "the seeded agents to run, comma-separated (one prickle-runner each)")
	template := flag.String("template", "", "claude or codex (default: claude if it is on your PATH, else codex)")
	dir := flag.String("dir", ".", "the directory the agents' runs start in (your project)")
	runnerBin := flag.String("runner", ".prickle/prickle-runner", "the built prickle-runner (make agents builds it)")
	flag.Parse()
	stateDir := os.Getenv("PRICKLE_STATE_DIR")
	if stateDir == "" {
		stateDir = ".prickle"
	}
	if err := run(stateDir, split(*agents), *template, *dir, *runnerBin); err != nil {
		fmt.Fprintln(os.Stderr, "agents:", err)
		os.Exit(1)
	}
}

func run(stateDir string, agents []string, template, dir, runnerBin string) error {
	st, err := localjson.Read(filepath.Join(stateDir, "local.json"))
	if err != nil {
		return err
	}
	if st.MCPURL == "" {
		return fmt.Errorf("no local stack (%s/local.json is missing): start `make local` in another terminal, then run `make agents` again", stateDir)
	}
	base := strings.TrimSuffix(st.MCPURL, "/mcp")
	if err := reachable(base); err != nil {
		return fmt.Errorf("the local stack at %s does not answer (%v): start `make local` in another terminal, then run `make agents` again", base, err)
	}
	tmpl, program, checked, err := pickTemplate(template, exec.LookPath, signedIn)
	if err != nil {
		return err
	}
	signIn := "signed in"
	if !checked {
		signIn = "sign-in not confirmed by " + tmpl
	}
	if _, err := os.Stat(runnerBin); err != nil {
		return fmt.Errorf("no prickle-runner at %s: run `make agents` (it builds it), or go build -o %s ./infra/cmd/prickle-runner", runnerBin, runnerBin)
	}
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if len(agents) == 0 {
		return errors.New("-agents names no agent")
	}
	for _, a := range agents {
		if st.Tokens[a] == "" {
			return fmt.Errorf("%s has no token in %s/local.json; the seeded agents with one: %s", a, stateDir, strings.Join(seeded(st), ", "))
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := pullMode(ctx, st, agents); err != nil {
		return err
	}
	var cmds []*exec.Cmd
	for _, a := range agents {
		path := filepath.Join(stateDir, "runner-"+strings.ReplaceAll(a, "/", "-")+".yaml")
		b, err := runnerConfig(base, a, tmpl, absDir, stateDir)
		if err != nil {
			return err
		}
		if err := writePrivate(path, b); err != nil {
			return err
		}
		cmd := exec.Command(runnerBin, "--config", path)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		cmd.Env = append(os.Environ(), tokenEnv+"="+st.Tokens[a])
		fmt.Printf("agents: prickle-runner for %s, pull mode, %s (%s, %s), runs in %s; config %s\n", a, tmpl, program, signIn, absDir, path)
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("start prickle-runner for %s: %w", a, err)
		}
		cmds = append(cmds, cmd)
	}
	fmt.Println("agents: create a task for " + agents[0] + " on the board (" + base + "/p/website-v2/tasks); Ctrl-C stops the runners")
	return wait(ctx, cmds)
}

// wait waits for every runner; Ctrl-C reaches them from the terminal, and a
// SIGTERM to this command is passed on.
func wait(ctx context.Context, cmds []*exec.Cmd) error {
	var wg sync.WaitGroup
	errs := make([]error, len(cmds))
	for i, c := range cmds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.Wait()
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		for _, c := range cmds {
			_ = c.Process.Signal(syscall.SIGTERM)
		}
		<-done
		return nil
	}
	return errors.Join(errs...)
}

// pickTemplate chooses the runs' agent CLI: the one asked for, else Claude
// Code, else Codex, whichever is on the PATH and not known to be signed
// out (signed says; checked is false when the CLI could not tell).
func pickTemplate(asked string, look func(string) (string, error), signed func(template, program string) (ok, known bool)) (template, program string, checked bool, err error) {
	const hint = "install Claude Code (npm install -g @anthropic-ai/claude-code, then run `claude` once to sign in) or Codex (npm install -g @openai/codex, then `codex login`), then run `make agents` again"
	signIn := map[string]string{
		"claude": "claude is on your PATH but not signed in: run `claude` once and sign in (/login), or set ANTHROPIC_API_KEY, then run `make agents` again",
		"codex":  "codex is on your PATH but not signed in: run `codex login`, then run `make agents` again",
	}
	var candidates []string
	switch asked {
	case "claude", "codex":
		candidates = []string{asked}
	case "":
		candidates = []string{"claude", "codex"}
	default:
		return "", "", false, fmt.Errorf("-template is claude or codex, not %q", asked)
	}
	var signedOut string
	for _, t := range candidates {
		p, err := look(t)
		if err != nil {
			continue
		}
		ok, known := signed(t, p)
		if known && !ok {
			if signedOut == "" {
				signedOut = signIn[t]
			}
			continue
		}
		if signedOut != "" {
			// Say why the first choice was passed over, and still start.
			fmt.Fprintf(os.Stderr, "agents: %s; using %s meanwhile\n", strings.TrimSuffix(signedOut, ", then run `make agents` again"), t)
		}
		return t, p, known, nil
	}
	switch {
	case signedOut != "":
		return "", "", false, errors.New(signedOut)
	case asked != "":
		return "", "", false, fmt.Errorf("%s is not on your PATH: %s", asked, hint)
	}
	return "", "", false, errors.New("neither claude (Claude Code) nor codex is on your PATH: " + hint)
}

// signedIn asks the agent CLI whether it is signed in: `claude auth status`
// (its JSON's loggedIn) or `codex login status` (exit 0). known is false
// when the answer says nothing sure: an older CLI, Claude Code through
// another provider (Bedrock, Vertex), or Codex not logged in, which may
// still run with a model provider of its own.
func signedIn(template, program string) (ok, known bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	switch template {
	case "claude":
		out, _ := exec.CommandContext(ctx, program, "auth", "status").Output()
		var st struct {
			LoggedIn    *bool  `json:"loggedIn"`
			APIProvider string `json:"apiProvider"`
		}
		if json.Unmarshal(out, &st) != nil || st.LoggedIn == nil || (st.APIProvider != "" && st.APIProvider != "firstParty") {
			return false, false
		}
		return *st.LoggedIn, true
	case "codex":
		err := exec.CommandContext(ctx, program, "login", "status").Run()
		return err == nil, err == nil
	}
	return false, false
}

// runnerConfig is the runner's configuration for one agent, in pull mode;
// the token is read from tokenEnv, never written here.
func runnerConfig(base, agent, template, dir, stateDir string) ([]byte, error) {
	slug := strings.ReplaceAll(agent, "/", "-")
	c := map[string]any{
		"prickle_url":     base,
		"agent":           agent,
		"agent_token_env": tokenEnv,
		"mode":            "pull",
		"log_dir":         filepath.Join(stateDir, "runner-logs", slug),
		"state_dir":       filepath.Join(stateDir, "runner-state", slug),
		"projects":        map[string]any{"*": map[string]any{"dir": dir, "template": template}},
	}
	b, err := yaml.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("encode runner config: %w", err)
	}
	return append([]byte("# written by `make agents` (infra/dev/agents); the token comes from "+tokenEnv+"\n"), b...), nil
}

// pullMode removes each agent's wake webhook, so its wake-ups wait for a
// runner to claim them: what `prickle-admin set-wake --local --pull` does.
func pullMode(ctx context.Context, st localjson.State, agents []string) error {
	s := store.New(store.NewFunctionClient(st.DynamoDBEndpoint), store.Tables{
		Tasks: st.Tables["TasksTable"], Steps: st.Tables["StepsTable"], Pulse: st.Tables["PulseTable"], Directory: st.Tables["DirectoryTable"],
		Wakeups: st.Tables["WakeupsTable"], OAuth: st.Tables["OAuthTable"]})
	for _, a := range agents {
		if err := s.DeleteWakeHook(ctx, a); err != nil {
			return fmt.Errorf("switch %s to pull mode: %w", a, err)
		}
	}
	return nil
}

func reachable(base string) error {
	c := http.Client{Timeout: 3 * time.Second}
	resp, err := c.Get(base + "/docs/reference/mcp-tools")
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

func writePrivate(path string, b []byte) error {
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return err
	}
	return os.Chmod(path, 0o600)
}

func seeded(st localjson.State) []string {
	var out []string
	for a := range st.Tokens {
		out = append(out, a)
	}
	slices.Sort(out)
	return out
}

func split(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
