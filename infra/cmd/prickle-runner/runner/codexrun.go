package runner

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"
)

// The codex-run command: its flags, the run's inputs from the environment
// prickle-runner gives it, and its main.

// CodexRunCommand is the runner's subcommand that hosts a Codex run: the
// codex template starts `<prickle-runner> codex-run [flags]`.
const CodexRunCommand = "codex-run"

// CodexOptions are codex-run's flags.
type CodexOptions struct {
	// Program is the Codex executable (default codex).
	Program string
	// Config are `-c key=value` overrides handed to `codex app-server`.
	Config []string
	// Poll is the first wait before asking request_step again while the
	// owner decides; each wait doubles, up to PollMax. SIGUSR1 asks at once.
	Poll, PollMax time.Duration
}

type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, " ") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

// ParseCodexArgs parses codex-run's arguments: --codex PATH, -c key=value
// (repeatable), --poll and --poll-max.
func ParseCodexArgs(args []string) (CodexOptions, error) {
	o := CodexOptions{}
	fs := flag.NewFlagSet(CodexRunCommand, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.Program, "codex", "codex", "the Codex executable")
	fs.Var((*repeated)(&o.Config), "c", "a config override for codex app-server (key=value, repeatable)")
	fs.DurationVar(&o.Poll, "poll", 5*time.Second, "first wait before asking the owner's decision again")
	fs.DurationVar(&o.PollMax, "poll-max", time.Minute, "longest wait before asking the owner's decision again")
	if err := fs.Parse(args); err != nil {
		return CodexOptions{}, fmt.Errorf("%s: %w", CodexRunCommand, err)
	}
	if fs.NArg() > 0 {
		return CodexOptions{}, fmt.Errorf("%s: unexpected argument %q (Codex's own settings go in -c key=value)", CodexRunCommand, fs.Arg(0))
	}
	if o.Poll <= 0 || o.PollMax < o.Poll {
		return CodexOptions{}, fmt.Errorf("%s: --poll %s must be positive and --poll-max %s at least as long", CodexRunCommand, o.Poll, o.PollMax)
	}
	return o, nil
}

// codexEnv is a run's inputs, from the environment the runner gives it.
type codexEnv struct {
	MCPURL, RunToken, RunID, TaskID, Prompt, SessionDir string
	// Project is the run's project (its file claims); none claims nothing.
	Project string
}

func codexEnvFrom(getenv func(string) string) (codexEnv, error) {
	e := codexEnv{MCPURL: getenv("PRICKLE_MCP_URL"), RunToken: getenv("PRICKLE_RUN_TOKEN"), RunID: getenv("PRICKLE_RUN_ID"),
		TaskID: getenv("PRICKLE_TASK_ID"), Prompt: getenv("PRICKLE_PROMPT"), SessionDir: getenv("PRICKLE_SESSION_DIR"),
		Project: getenv("PRICKLE_PROJECT")}
	if err := unsetEnv(CodexRunCommand, getenv, "PRICKLE_MCP_URL", "PRICKLE_RUN_TOKEN", "PRICKLE_RUN_ID",
		"PRICKLE_TASK_ID", "PRICKLE_PROMPT", "PRICKLE_SESSION_DIR"); err != nil {
		return codexEnv{}, err
	}
	return e, nil
}

// unsetEnv is the error of a run (command) under prickle-runner whose
// environment lacks any of names, naming those, in order; nil when none does.
func unsetEnv(command string, getenv func(string) string, names ...string) error {
	var missing []string
	for _, n := range names {
		if getenv(n) == "" {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s runs under prickle-runner: %s not set", command, strings.Join(missing, ", "))
	}
	return nil
}

// CodexMain is `prickle-runner codex-run`: it hosts `codex app-server` for
// one run of a task and answers Codex's approval requests with the owner's
// decisions (request_step). ctx ends on SIGTERM; wake gets SIGUSR1 (ask the
// owner's decision again now). It returns the process's exit status.
func CodexMain(ctx context.Context, args []string, wake <-chan os.Signal, stdout, stderr io.Writer) int {
	log := slog.New(slog.NewJSONHandler(stdout, nil))
	opt, err := ParseCodexArgs(args)
	if err != nil {
		return cannotStart(log, CodexRunCommand, err)
	}
	env, err := codexEnvFrom(os.Getenv)
	if err != nil {
		return cannotStart(log, CodexRunCommand, err)
	}
	dir, err := os.Getwd()
	if err != nil {
		return cannotStart(log, CodexRunCommand, err)
	}
	h := newCodexHost(opt, env, dir, RunMCP(env.MCPURL, 30*time.Second), log, wake)
	h.stderr = stderr
	start := time.Now()
	err = h.run(ctx)
	log.Info(CodexUsageMsg, "task", env.TaskID, "run", env.RunID, "usage", h.usage.report(time.Since(start)))
	if err != nil {
		log.Error("codex-run ended", "task", env.TaskID, "run", env.RunID, "error", err.Error())
		return 1
	}
	return 0
}
