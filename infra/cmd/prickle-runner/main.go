// Command prickle-runner runs where an agent works and starts its runs when
// Prickle wakes it: by a signed webhook, or by claiming wake-ups (pull mode,
// no public URL needed). See docs/running-agents.md and
// runner.example.yaml.
//
//	go install github.com/useprickle/prickle/infra/cmd/prickle-runner@latest
//	prickle-runner --config runner.yaml
//
// `prickle-runner hook` is Claude Code's PreToolUse hook inside a run the
// runner started (the claude template installs it); it is not run by hand.
//
// `prickle-runner hook --cli <qwen|gemini|copilot>` is the gate of those
// templates' runs, and `prickle-runner agent-run` what they start.
//
// `prickle-runner codex-run` is what the codex template starts for a run:
// it hosts `codex app-server` and asks the owner before Codex's calls.
package main

import (
	"context"
	"flag"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/useprickle/prickle/infra/cmd/prickle-runner/runner"
)

func main() {
	if len(os.Args) > 2 && os.Args[1] == runner.HookCommand && runner.AgentHookCLI(os.Args[2:]) != "" {
		// The gate of the qwen, gemini and copilot templates: always one
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
	if err := runner.Serve(ctx, cfg, out); err != nil {
		out.Error("prickle-runner stopped", "error", err.Error())
		stop()
		os.Exit(1)
	}
}
