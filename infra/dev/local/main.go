// Command local runs Prickle's local stack, the main job on a laptop: a
// DynamoDB emulator on loopback (unless PRICKLE_DYNAMODB_ENDPOINT names one),
// the tables exactly as template.yaml declares them, the seeded website-v2
// project, and the MCP endpoint on 127.0.0.1:$PORT with routing by Mcp-Name
// as the cloud does. It writes .prickle/local.json and prints the line to
// connect Claude Code. Ctrl-C stops everything it started.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/useprickle/prickle/infra/cmd/prickle-admin/localjson"
	"github.com/useprickle/prickle/shared/auth/session"
	"github.com/useprickle/prickle/shared/owners/slack"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	if err := run(ctx, log, configFromEnv()); err != nil {
		fmt.Fprintln(os.Stderr, "local stack:", err)
		os.Exit(1)
	}
}

// config is the local stack's knobs, all from the environment.
type config struct {
	port     string // PORT, default 3000
	stateDir string // PRICKLE_STATE_DIR, default .prickle
	endpoint string // PRICKLE_DYNAMODB_ENDPOINT: use this emulator instead of starting one
	template string // PRICKLE_TEMPLATE, default template.yaml
	fresh    bool   // PRICKLE_FRESH=1: forget the emulator's saved state and seed again
	lose     string // PRICKLE_LOSE_ANSWERS=N: lose one write's answer in N (the fault run)
}

func configFromEnv() config {
	c := config{
		port: os.Getenv("PORT"), stateDir: os.Getenv("PRICKLE_STATE_DIR"),
		endpoint: os.Getenv("PRICKLE_DYNAMODB_ENDPOINT"), template: os.Getenv("PRICKLE_TEMPLATE"),
		fresh: os.Getenv("PRICKLE_FRESH") == "1", lose: os.Getenv("PRICKLE_LOSE_ANSWERS"),
	}
	if c.port == "" {
		c.port = "3000"
	}
	if c.stateDir == "" {
		c.stateDir = ".prickle"
	}
	if c.template == "" {
		c.template = "template.yaml"
	}
	return c
}

func run(ctx context.Context, log *slog.Logger, cfg config) error {
	every, err := parseLoseAnswers(cfg.lose)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(cfg.stateDir, 0o700); err != nil {
		return fmt.Errorf("state dir: %w", err)
	}
	// Bind the port first: a busy port should fail before anything starts.
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", cfg.port))
	if err != nil {
		return fmt.Errorf("listen on 127.0.0.1:%s (set PORT to use another): %w", cfg.port, err)
	}
	defer ln.Close()
	if addr := os.Getenv("PRICKLE_PPROF"); addr != "" {
		if err := servePprof(addr, log); err != nil {
			return err
		}
	}

	endpoint := cfg.endpoint
	if endpoint == "" {
		statePath := filepath.Join(cfg.stateDir, "dynamodb.log")
		if cfg.fresh {
			_ = os.Remove(statePath)
			_ = os.Remove(statePath + ".snapshot")
		}
		emu, err := startEmulator(ctx, statePath, filepath.Join(cfg.stateDir, "emulator.log"))
		if err != nil {
			return err
		}
		defer emu.stop()
		endpoint = emu.endpoint
		fmt.Printf("emulator   %s (moto, state kept in %s)\n", endpoint, statePath)
	}

	totalsURL := ""
	if every > 0 {
		lossy, proxy, err := loseAnswers(endpoint, every)
		if err != nil {
			return err
		}
		defer proxy.Close()
		endpoint, totalsURL = lossy, proxy.URL+"/totals"
		fmt.Printf("fault run  one write's answer in %d lost, through %s (counts at %s)\n", every, endpoint, totalsURL)
	}

	env, err := prepare(ctx, cfg, endpoint)
	if err != nil {
		return err
	}
	mcpURL := "http://" + ln.Addr().String() + "/mcp"
	state := localjson.State{MCPURL: mcpURL, Tokens: env.tokens, DynamoDBEndpoint: endpoint, Tables: env.tables,
		SlackInteractivityURL: "http://" + ln.Addr().String() + slack.Path, SlackSigningSecret: env.slackSecret,
		LoseAnswers: every, FaultTotalsURL: totalsURL}
	path := filepath.Join(cfg.stateDir, "local.json")
	if err := state.Write(path); err != nil {
		return err
	}

	handler, err := env.handler(ctx, log, "http://"+ln.Addr().String())
	if err != nil {
		return err
	}
	_, port, err := net.SplitHostPort(ln.Addr().String())
	if err != nil {
		return fmt.Errorf("listen address: %w", err)
	}
	srv := newServer(handler, port)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	printWelcome(state, path)
	printSignInLinks(env, "http://"+ln.Addr().String())

	select {
	case <-ctx.Done():
		fmt.Println("\nstopping")
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("serve: %w", err)
		}
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(shutdown)
}

func printWelcome(s localjson.State, path string) {
	fmt.Printf("mcp        %s\n", s.MCPURL)
	fmt.Printf("tokens     %s (mode 0600; demo tokens of the seeded agents)\n", path)
	fmt.Printf("slack      %s (the buttons' endpoint; its signing secret is in %s)\n", s.SlackInteractivityURL, path)
	fmt.Println()
	fmt.Println("Connect Claude Code as alice/writer (assignee of example-task-id):")
	fmt.Printf("  claude mcp add --transport http prickle %s --header \"Authorization: Bearer %s\"\n", s.MCPURL, s.Tokens["alice/writer"])
}

// printSignInLinks prints one sign-in link per seeded owner (single use, for
// session.LinkLifetime; ask for a new one at /signin, it lands in the dev outbox), then
// says the stack is ready.
func printSignInLinks(env *environment, baseURL string) {
	keys, err := session.NewKeys(env.signer.Key)
	if err == nil {
		fmt.Println()
		fmt.Printf("Sign in to Team Pulse, the board and task pages (each link works once, for %d minutes; more at %s/signin):\n", int(session.LinkLifetime/time.Minute), baseURL)
		now := time.Now()
		for _, o := range seedOwners {
			fmt.Printf("  %-6s %s/signin/%s\n", o.Name, baseURL, keys.SignInToken(o.Name, session.ViaConsole, now))
		}
		fmt.Printf("Tool reference: %s/docs/reference/mcp-tools   dev outbox: %s/dev/outbox\n", baseURL, baseURL)
	}
	fmt.Println()
	fmt.Println("Run the agents: in a second terminal, `make agents` (prickle-runner for alice/writer, pull mode, your claude or codex)")
	fmt.Println("ready: Ctrl-C stops the stack")
}
