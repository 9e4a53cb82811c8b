// Command rie runs Prickle's built Lambda binaries the way Lambda runs them:
// each functions/<name> bootstrap under its own aws-lambda-rie (the Lambda
// Runtime Interface Emulator, `make rie`) on loopback, over the local stack's
// emulator, tables and seed (infra/dev/local, started as a child process). A
// loopback router serves /mcp exactly as the custom domain's routing rules
// do (endpoint.RouteByHeader): `Mcp-Name: <tool>` tool calls go straight to
// the tool's function, everything else to mcp, which hands older clients'
// tool calls on by Lambda Invoke (a loopback Invoke API over the emulators).
// Functions publish to a loopback EventBridge PutEvents that delivers each
// event to the functions the template's rules name.
//
//	go run ./infra/dev/rie          serve until Ctrl-C (PORT, default a free port)
//	go run ./infra/dev/rie -e2e     run the TypeScript and Python MCP client scenarios against it, then stop
//	go run ./infra/dev/rie -measure print each function's binary size and INIT duration (markdown)
//	go run ./infra/dev/rie -sam     the functions in the SAM CLI's containers instead (make sam-local, sam.go)
//	-gateway http               the HTTP API in front instead (template.yaml's ApiGateway=http):
//	                            payload 2.0 events, every tool call through mcp
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
)

func main() {
	e2e := flag.Bool("e2e", false, "run the MCP client scenarios against the stack, then stop")
	measure := flag.Bool("measure", false, "print the size / init duration table, then stop")
	suites := flag.String("suites", "ts py routing", "with -e2e: which suites to run (ts, py, raw, routing)")
	sam := flag.Bool("sam", false, "run the functions in the SAM CLI's containers (sam local start-api, start-lambda; needs Docker and the base image)")
	gateway := flag.String("gateway", "rest", "the API in front: rest (routing by header) or http (HTTP API, payload 2.0, all through mcp)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	root, err := os.Getwd()
	if err != nil {
		fatal(err)
	}
	stateDir := os.Getenv("PRICKLE_RIE_STATE_DIR")
	if stateDir == "" && *sam {
		// Kept: docs/sam-local.md's `sam local invoke` commands use its env-vars file and built template.
		stateDir = filepath.Join(root, ".prickle", "sam-local")
	}
	if stateDir == "" {
		if stateDir, err = os.MkdirTemp("", "prickle-rie-"); err != nil {
			fatal(err)
		}
		defer os.RemoveAll(stateDir)
	}
	s, err := Start(ctx, Options{Root: root, StateDir: stateDir, Port: os.Getenv("PORT"), Log: log, Gateway: *gateway, SAM: *sam})
	if err != nil {
		fatal(err)
	}
	defer s.Close()

	switch {
	case *measure:
		if err := s.Measure(ctx, os.Stdout); err != nil {
			s.Close()
			fatal(err)
		}
	case *e2e:
		if err := s.RunE2E(ctx, root, *suites); err != nil {
			s.Close()
			fatal(err)
		}
		if *sam {
			fmt.Println("e2e-sam (sam local start-api): all suites passed")
		} else {
			fmt.Printf("e2e-rie (%s gateway): all suites passed\n", *gateway)
		}
	case *sam:
		fmt.Printf("mcp        %s (sam local start-api; each function in its own container; logs in %s)\n", s.MCPURL, filepath.Join(stateDir, "logs"))
		fmt.Printf("state      %s (mode 0600; demo tokens of the seeded agents)\n", s.StatePath)
		fmt.Println()
		fmt.Println("Connect Claude Code as alice/writer (assignee of example-task-id):")
		fmt.Printf("  claude mcp add --transport http prickle %s --header \"Authorization: Bearer %s\"\n", s.MCPURL, s.Local.Tokens["alice/writer"])
		fmt.Println("One function with one sample (while this runs: the env-vars file points at its emulator):")
		fmt.Printf("  sed s/REPLACE_WITH_AGENT_TOKEN/%s/ events/mcp-tools-list.json | .venv/bin/sam local invoke McpFunction -e - %s\n",
			s.Local.Tokens["alice/writer"], strings.Join(s.samLocalArgs(), " "))
		fmt.Println("ready: Ctrl-C stops the stack (and its containers)")
		<-ctx.Done()
	default:
		fmt.Printf("mcp        %s (each function under its own aws-lambda-rie; logs in %s)\n", s.MCPURL, filepath.Join(stateDir, "logs"))
		fmt.Printf("state      %s\n", s.StatePath)
		fmt.Println("ready: Ctrl-C stops the stack")
		<-ctx.Done()
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "rie:", err)
	os.Exit(1)
}
