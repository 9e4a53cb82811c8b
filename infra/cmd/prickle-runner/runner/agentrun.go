package runner

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// `prickle-runner agent-run --cli <name>` is what the qwen, gemini, copilot
// and opencode templates start for a run. It gives the CLI a home of the task's
// (in the task's session dir, so its sessions outlive the run) whose
// settings are the user's own (read, never written) with Prickle's MCP
// server, connected with the run token, and the gate (`prickle-runner hook
// --cli <name>`) before every tool call; the files holding the token are
// 0600 and removed when the run ends. It starts the task's one session, or
// resumes it on every later wake-up (a session that cannot be resumed is
// started afresh, told the call last asked), and ends with one line
// (AgentUsageMsg) with the run's tokens, which the runner reports with the
// run's end.

// AgentRunCommand is the subcommand of prickle-runner that runs one CLI run.
const AgentRunCommand = "agent-run"

// AgentUsageMsg is the msg of agent-run's last line, carrying its "usage".
const AgentUsageMsg = "agent-run usage"

// agentTemplate is one CLI's side of a run.
type agentTemplate interface {
	agentCLI
	// program is the executable's default name.
	program() string
	// userDir is the user's own configuration directory of the CLI
	// (settings and sign-in), read and never written.
	userDir(getenv func(string) string) string
	// loginFiles are the files of userDir that hold the user's sign-in.
	loginFiles() []string
	// prepare writes the run's settings (r.secretFiles for those holding
	// the token) and adds the run's environment.
	prepare(r *agentRun) error
	argv(r *agentRun, prompt string) []string
	// usage reads what the CLI reported of the run's tokens.
	usage(stdout []byte, r *agentRun) (agentUsage, bool)
}

var agentTemplates = map[string]agentTemplate{
	TemplateQwen:     qwenTemplate,
	TemplateGemini:   geminiTemplate,
	TemplateCopilot:  copilotTemplate,
	TemplateOpencode: opencodeTemplate,
}

// tokens are a run's or a session's model tokens.
type tokens struct {
	Input  int64 `json:"input_tokens"`
	Output int64 `json:"output_tokens"`
}

// agentUsage is what a CLI reported; Cumulative counts are the session's
// since it started (qwen, copilot), else the run's own (gemini).
type agentUsage struct {
	SessionID  string
	Cumulative bool
	// TurnsCumulative: Turns counts the session's requests (copilot).
	TurnsCumulative bool
	Model           string
	Turns           int
	DurationMS      int64
	Tokens          tokens
	// CostUSD is the run's cost as the CLI reported it (opencode), else 0.
	CostUSD float64
}

// agentSession is what agent-run keeps of the task's session (agent-<cli>.json
// in the session dir): its id, where it runs, and its tokens so far.
type agentSession struct {
	ID        string    `json:"session_id"`
	Dir       string    `json:"dir"`
	Runs      int       `json:"runs"`
	Total     tokens    `json:"total"`
	Turns     int       `json:"turns,omitempty"`
	UpdatedAt time.Time `json:"updated_at"`
}

// agentRun is one run being prepared and started.
type agentRun struct {
	program, self, mcpURL, runToken string
	args                            []string
	// dir is the project's directory, cliHome the task's home of the CLI,
	// userDir the user's own configuration of it, runDir the run's own
	// (removed when it ends).
	dir, cliHome, userDir, runDir string
	sessionID                     string
	resume                        bool
	// model is the run's model where the CLI's usage does not name it.
	model       string
	env         []string
	secretFiles []string
}

// agentEnv are agent-run's inputs from the runner.
type agentEnv struct {
	MCPURL, RunToken, RunID, SessionDir, Prompt, NewPrompt, ResumePrompt string
}

func agentEnvFrom(getenv func(string) string) (agentEnv, error) {
	e := agentEnv{MCPURL: getenv("PRICKLE_MCP_URL"), RunToken: getenv("PRICKLE_RUN_TOKEN"), RunID: getenv("PRICKLE_RUN_ID"),
		SessionDir: getenv("PRICKLE_SESSION_DIR"), NewPrompt: getenv("PRICKLE_NEW_PROMPT"), ResumePrompt: getenv("PRICKLE_RESUME_PROMPT")}
	if err := unsetEnv(AgentRunCommand, getenv, "PRICKLE_MCP_URL", "PRICKLE_RUN_TOKEN", "PRICKLE_RUN_ID",
		"PRICKLE_SESSION_DIR", "PRICKLE_NEW_PROMPT", "PRICKLE_RESUME_PROMPT"); err != nil {
		return agentEnv{}, err
	}
	return e, nil
}

// cannotStart logs why a run's command (agent-run, codex-run) could not
// start; it is the command's exit status.
func cannotStart(log *slog.Logger, command string, err error) int {
	log.Error(command+" cannot start", "error", err.Error())
	return 2
}

// AgentRunMain is `prickle-runner agent-run --cli <name> --program <path>
// [-- args]`; ctx ends on SIGTERM. It returns the process's exit status.
func AgentRunMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	log := slog.New(slog.NewJSONHandler(stdout, nil))
	fs := flag.NewFlagSet(AgentRunCommand, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cliName := fs.String("cli", "", "qwen, gemini, copilot or opencode")
	program := fs.String("program", "", "the CLI's executable")
	if err := fs.Parse(args); err != nil {
		return cannotStart(log, AgentRunCommand, err)
	}
	t, ok := agentTemplates[*cliName]
	if !ok {
		return cannotStart(log, AgentRunCommand, fmt.Errorf("--cli %q is not qwen, gemini, copilot or opencode", *cliName))
	}
	e, err := agentEnvFrom(os.Getenv)
	if err != nil {
		return cannotStart(log, AgentRunCommand, err)
	}
	self, err := os.Executable()
	if err != nil {
		return cannotStart(log, AgentRunCommand, fmt.Errorf("own executable: %w", err))
	}
	dir, err := os.Getwd()
	if err != nil {
		return cannotStart(log, AgentRunCommand, err)
	}
	r := &agentRun{program: programOr(*program, t.program()), self: self, mcpURL: e.MCPURL, runToken: e.RunToken, args: fs.Args(), dir: dir,
		cliHome: filepath.Join(e.SessionDir, t.name()+"-home"), userDir: t.userDir(os.Getenv)}
	return agentRunWith(ctx, t, r, e, log, stdout, stderr)
}

// agentRunWith runs r: a resumed session, or a new one.
func agentRunWith(ctx context.Context, t agentTemplate, r *agentRun, e agentEnv, log *slog.Logger, stdout, stderr io.Writer) int {
	started := time.Now()
	statePath := filepath.Join(e.SessionDir, "agent-"+t.name()+".json")
	var s agentSession
	if _, err := readJSON(statePath, &s); err != nil {
		log.Warn("task session unreadable; a new conversation starts", "error", err.Error())
		s = agentSession{}
	}
	var err error
	if r.runDir, err = os.MkdirTemp(e.SessionDir, "run-"+safeName(e.RunID)+"-"); err != nil {
		return cannotStart(log, AgentRunCommand, err)
	}
	defer func() { _ = os.RemoveAll(r.runDir) }()
	if err := prepareHome(t, r); err != nil {
		return cannotStart(log, AgentRunCommand, err)
	}
	defer func() {
		for _, f := range r.secretFiles {
			_ = os.Remove(f)
		}
	}()
	base := r.env
	code := 0
	for attempt := 0; attempt < 2; attempt++ {
		r.env = base
		r.resume = s.ID != "" && s.Dir == r.dir && attempt == 0
		prompt := e.ResumePrompt
		if !r.resume {
			if r.sessionID, err = newSessionID(); err != nil {
				return cannotStart(log, AgentRunCommand, err)
			}
			s = agentSession{ID: r.sessionID, Dir: r.dir}
			if _, ok := t.(sessionNamer); ok {
				s.ID = "" // known once the CLI names it
			}
			prompt = e.NewPrompt
		} else {
			r.sessionID = s.ID
		}
		s.Runs++
		s.UpdatedAt = time.Now().UTC()
		if err := writeJSON(e.SessionDir, filepath.Base(statePath), s); err != nil {
			log.Warn("task session not saved: a later run starts a new conversation", "error", err.Error())
		}
		if err := t.prepare(r); err != nil {
			return cannotStart(log, AgentRunCommand, err)
		}
		log.Info("agent session", "cli", t.name(), "session", r.sessionID, "resumed", r.resume)
		tail := &lockedTail{t: tailBuffer{max: tailSize}}
		reported := func() bool { _, ok := t.usage(tail.bytes(), r); return ok }
		if w, ok := t.(resultWatcher); ok {
			reported = func() bool { return w.finished(tail.bytes()) }
		}
		code = runCLI(ctx, r, t.argv(r, prompt), io.MultiWriter(stdout, tail), stderr, reported)
		out := tail.bytes()
		if n, ok := t.(sessionNamer); ok {
			if id := n.sessionOf(out); id != "" && id != s.ID {
				s.ID, r.sessionID = id, id
				if err := writeJSON(e.SessionDir, filepath.Base(statePath), s); err != nil {
					log.Warn("task session not saved: a later run starts a new conversation", "error", err.Error())
				}
				log.Info("agent session", "cli", t.name(), "session", id, "named", true)
			}
		}
		if len(out) > 0 && out[len(out)-1] != '\n' {
			// The runner reads the usage line as a line of its own (gemini ends without a newline).
			_, _ = io.WriteString(stdout, "\n")
		}
		u, ok := t.usage(out, r)
		if !ok {
			if r.resume && ctx.Err() == nil && code != 0 {
				log.Warn("the session could not be resumed; a new conversation starts", "session", r.sessionID, "exit_code", code)
				continue
			}
			log.Warn("the CLI reported no usage", "exit_code", code)
			break
		}
		run := u.Tokens
		if u.Cumulative {
			run = tokens{Input: max(u.Tokens.Input-s.Total.Input, 0), Output: max(u.Tokens.Output-s.Total.Output, 0)}
			s.Total = u.Tokens
		} else {
			s.Total = tokens{Input: s.Total.Input + u.Tokens.Input, Output: s.Total.Output + u.Tokens.Output}
		}
		turns := u.Turns
		if u.TurnsCumulative {
			turns = max(u.Turns-s.Turns, 0)
			s.Turns = u.Turns
		}
		s.UpdatedAt = time.Now().UTC()
		if err := writeJSON(e.SessionDir, filepath.Base(statePath), s); err != nil {
			log.Warn("task session's tokens not saved", "error", err.Error())
		}
		took := u.DurationMS
		if took == 0 {
			took = time.Since(started).Milliseconds()
		}
		log.Info(AgentUsageMsg, "usage", Usage{CostUSD: u.CostUSD, InputTokens: run.Input, OutputTokens: run.Output, Turns: turns, DurationMS: took, Model: u.Model})
		break
	}
	return code
}

// prepareHome makes the task's home of the CLI and links the user's
// sign-in files into it (the CLI reads them where it reads its settings).
func prepareHome(t agentTemplate, r *agentRun) error {
	dir := r.cliHome
	if t.name() == TemplateGemini {
		dir = filepath.Join(r.cliHome, ".gemini")
	}
	if h, ok := t.(homeDirer); ok {
		dir = h.homeDir(r.cliHome)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("the CLI's home: %w", err)
	}
	for _, f := range t.loginFiles() {
		src := filepath.Join(r.userDir, f)
		if _, err := os.Stat(src); err != nil {
			continue
		}
		dst := filepath.Join(dir, f)
		if cur, err := os.Readlink(dst); err == nil && cur == src {
			continue
		}
		_ = os.Remove(dst)
		if err := os.Symlink(src, dst); err != nil {
			return fmt.Errorf("link the sign-in file %s: %w", f, err)
		}
	}
	return nil
}

// lingerAfterResult is how long a CLI may go on after it has printed its
// result (Qwen Code 0.24.4 lingers some 30 s) before it is ended.
const lingerAfterResult = 3 * time.Second

// lockedTail is a tailBuffer read while the CLI writes it.
type lockedTail struct {
	mu sync.Mutex
	t  tailBuffer
}

func (l *lockedTail) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.t.Write(p)
}

func (l *lockedTail) bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]byte(nil), l.t.buf...)
}

// runCLI runs argv in r.dir with the run's environment and returns its
// exit status; ctx's end (SIGTERM) is passed on as SIGTERM. A CLI that
// goes on lingerAfterResult after reported() says its result is out is
// ended (SIGTERM) and counts as exiting 0.
func runCLI(ctx context.Context, r *agentRun, argv []string, stdout, stderr io.Writer, reported func() bool) int {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = r.dir
	cmd.Env = append(os.Environ(), r.env...)
	cmd.Stdin = nil
	cmd.Stdout = stdout
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "agent-run: start %s: %v\n", argv[0], err)
		return 127
	}
	done := make(chan struct{})
	var ended atomic.Bool
	go func() {
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		var since time.Time
		for {
			select {
			case <-ctx.Done():
				_ = cmd.Process.Signal(syscall.SIGTERM)
				return
			case <-done:
				return
			case <-tick.C:
				switch {
				case since.IsZero() && reported != nil && reported():
					since = time.Now()
				case !since.IsZero() && time.Since(since) > lingerAfterResult:
					ended.Store(true)
					_ = cmd.Process.Signal(syscall.SIGTERM)
					return
				}
			}
		}
	}()
	err := cmd.Wait()
	close(done)
	var exit *exec.ExitError
	switch {
	case err == nil, ended.Load():
		return 0
	case errors.As(err, &exit):
		if c := exit.ExitCode(); c >= 0 {
			return c
		}
		return 128 + 15
	}
	return 1
}
