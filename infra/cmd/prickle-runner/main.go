// Command prickle-runner runs where an agent works and starts its runs when
// Prickle wakes it: by a signed webhook, or by claiming wake-ups (pull mode,
// no public URL needed). See docs/running-agents.md and
// runner.example.yaml.
//
//	go install github.com/useprickle/prickle/infra/cmd/prickle-runner@latest
//	prickle-runner --config runner.yaml
//
// `prickle-runner login <Prickle URL>` joins the runner to one of its
// owner's agents by the owner's sign-in (a short code and a link; OAuth 2.0
// device authorization) and keeps the agent token in the state folder
// (0600); a start with no token configured and none kept does the same first.
//
// `prickle-runner hook` is Claude Code's PreToolUse hook inside a run the
// runner started (the claude template installs it); it is not run by hand.
//
// `prickle-runner hook --cli <qwen|gemini|copilot|opencode>` is the gate of
// those templates' runs (with --after, the post-tool hook of qwen, gemini and
// copilot, which claims what a shell call changed), and `prickle-runner
// agent-run` what they start.
//
// `prickle-runner codex-run` is what the codex template starts for a run:
// it hosts `codex app-server` and asks the owner before Codex's calls.
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/useprickle/prickle/infra/cmd/prickle-runner/runner"
)

func main() {
	if len(os.Args) > 2 && os.Args[1] == runner.HookCommand && runner.AgentHookCLI(os.Args[2:]) != "" && runner.AgentHookAfter(os.Args[2:]) {
		// Their post-tool hook: what a shell call changed is claimed.
		os.Exit(runner.AgentAfterHook(context.Background(), runner.AgentHookCLI(os.Args[2:]), os.Stdin, os.Stdout, os.Getenv))
	}
	if len(os.Args) > 2 && os.Args[1] == runner.HookCommand && runner.AgentHookCLI(os.Args[2:]) != "" {
		// The gate of the qwen, gemini, copilot and opencode templates: always one
		// well-formed answer, a deny on any error (a crash is denied by the
		// command that runs it).
		os.Exit(runner.AgentHook(context.Background(), runner.AgentHookCLI(os.Args[2:]), os.Stdin, os.Stdout, os.Getenv))
	}
	if len(os.Args) > 1 && os.Args[1] == runner.AgentRunCommand {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := runner.AgentRunMain(ctx, os.Args[2:], os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	if len(os.Args) > 1 && os.Args[1] == runner.HookCommand {
		if err := runner.Hook(context.Background(), os.Stdin, os.Stdout, os.Getenv); err != nil {
			slog.New(slog.NewJSONHandler(os.Stderr, nil)).Error("prickle-runner hook", "error", err.Error())
			os.Exit(1)
		}
		return
	}
	if len(os.Args) > 1 && os.Args[1] == runner.CodexRunCommand {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		wake := make(chan os.Signal, 1)
		signal.Notify(wake, syscall.SIGUSR1)
		code := runner.CodexMain(ctx, os.Args[2:], wake, os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	if len(os.Args) > 1 && os.Args[1] == runner.LoginCommand {
		os.Exit(login(os.Args[2:]))
	}
	configPath := flag.String("config", "runner.yaml", "the runner's configuration file (see runner.example.yaml)")
	flag.Parse()
	out := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	cfg, err := runner.LoadConfig(*configPath)
	if err != nil {
		out.Error("prickle-runner cannot start", "error", err.Error())
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if _, err := cfg.Token(); errors.Is(err, runner.ErrNotJoined) && !cfg.TokenConfigured() {
		// The first start with no token: join by the owner's sign-in, then run.
		if err := joinAndKeep(ctx, cfg.PrickleURL, cfg.StateDir, ""); err != nil {
			out.Error("prickle-runner cannot start", "error", err.Error())
			os.Exit(2)
		}
	}
	if j, err := runner.LoadJoined(cfg.StateDir, cfg.PrickleURL); err == nil && !cfg.TokenConfigured() && cfg.Agent == "" {
		cfg.Agent = j.Agent // the agent the login joined, in the runner's output
	}
	if err := runner.Serve(ctx, cfg, out); err != nil {
		out.Error("prickle-runner stopped", "error", err.Error())
		stop()
		os.Exit(1)
	}
}

// login is `prickle-runner login [<Prickle URL>] [--config runner.yaml] [--state-dir DIR] [--name NAME]`.
// The URL and the state folder default to the config's, when there is one.
func login(args []string) int {
	fs := flag.NewFlagSet("prickle-runner login", flag.ContinueOnError)
	configPath := fs.String("config", "runner.yaml", "the runner's configuration file, for its prickle_url and state_dir (if it exists)")
	stateDir := fs.String("state-dir", "", "where to keep the token (default: the config's state_dir, else ~/.prickle-runner/state)")
	name := fs.String("name", "", "what your owner sees of this machine (default: its host name)")
	base := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		base, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if base == "" && fs.NArg() > 0 {
		base = fs.Arg(0)
	}
	if _, err := os.Stat(*configPath); err == nil {
		cfg, err := runner.LoadConfig(*configPath)
		if err != nil {
			fmt.Fprintln(os.Stderr, "prickle-runner login:", err)
			return 2
		}
		base = cmp.Or(base, cfg.PrickleURL)
		*stateDir = cmp.Or(*stateDir, cfg.StateDir)
	}
	if base == "" {
		fmt.Fprintln(os.Stderr, "usage: prickle-runner login <Prickle URL> [--state-dir DIR] [--name NAME]")
		return 2
	}
	if *stateDir == "" {
		if home, err := os.UserHomeDir(); err == nil {
			*stateDir = home + "/.prickle-runner/state"
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := joinAndKeep(ctx, base, *stateDir, *name); err != nil {
		fmt.Fprintln(os.Stderr, "prickle-runner login:", err)
		return 1
	}
	return 0
}

// joinAndKeep runs the login and keeps its token in stateDir.
func joinAndKeep(ctx context.Context, base, stateDir, name string) error {
	j, err := runner.Login{PrickleURL: base, Name: name, Out: os.Stderr}.Run(ctx)
	if err != nil {
		return err
	}
	if err := runner.SaveJoined(stateDir, j); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "Joined: this machine runs %s (runner %s). Its token is kept in %s (mode 0600); your owner can revoke it on the owners page.\n",
		j.Agent, j.RunnerID, runner.JoinedPath(stateDir))
	return nil
}
