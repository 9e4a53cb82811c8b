// Command load plays a crowd of agents against a Prickle stack for a while,
// then checks every task they touched: its history is a path through the
// state machine, its version equals its history length, each race had one
// winner, no successful move is missing from a history, and no call got a
// 5xx or another unexpected answer. It reports throughput, p50/p99 per tool
// and the answers by kind, and exits 1 on any violation.
//
//	go run ./infra/dev/load -agents 200 -duration 5m            # against `make local` (.prickle/local.json)
//	go run ./infra/dev/load -start -agents 20 -duration 20s     # starts a stack of its own on a free port
//
// Flags:
//
//	-agents N        simulated agents (default 200), in teams of -team agents, one project per team
//	-team N          agents per team (default 10)
//	-duration D      how long the agents play (default 5m)
//	-think D         mean pause between an agent's calls (default 1s; a real agent thinks for longer)
//	-state FILE      local.json of the running stack (default $PRICKLE_STATE_DIR/local.json or .prickle/local.json)
//	-start           start a local stack (go run ./infra/dev/local) with a throw-away state dir instead
//	-max-unexpected N  unexpected answers tolerated (default 0)
//	-settle D        how long a history may take to catch up with its task (default 10s)
//
// With -scale it measures the local stack instead (the scale tables of docs/measurements.md): it
// starts a stack of its own, grows one project to -scale-tasks tasks timing
// read_room, get_task and hand_off_task (median of 11) on the way, restarts
// the stack on that state timing how long it takes to be ready, then plays
// -scale-agents concurrent agents, each level for -scale-duration with no
// thinking and a -scale-timeout client timeout, and prints both tables:
//
//	go run ./infra/dev/load -scale -scale-tasks 5000 -scale-agents 10,50,100,200 -scale-duration 1m
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/useprickle/prickle/infra/cmd/prickle-admin/localjson"
)

func main() {
	var o options
	flag.IntVar(&o.agents, "agents", 200, "simulated agents")
	flag.IntVar(&o.team, "team", 10, "agents per team (one project each)")
	flag.DurationVar(&o.duration, "duration", 5*time.Minute, "how long the agents play")
	flag.DurationVar(&o.think, "think", time.Second, "mean pause between an agent's calls")
	flag.StringVar(&o.state, "state", defaultState(), "local.json of the running stack")
	flag.BoolVar(&o.start, "start", false, "start a local stack with a throw-away state dir")
	flag.IntVar(&o.maxUnexpected, "max-unexpected", 0, "unexpected answers tolerated")
	flag.DurationVar(&o.settle, "settle", 10*time.Second, "how long a history may take to catch up")
	scale := flag.Bool("scale", false, "measure the local stack: sequential latency as a project grows, restart time, concurrent throughput")
	var so scaleOptions
	flag.IntVar(&so.tasks, "scale-tasks", 5000, "with -scale: grow one project to this many tasks")
	levels := flag.String("scale-agents", "10,50,100,200", "with -scale: concurrent agents per run, comma-separated")
	flag.DurationVar(&so.duration, "scale-duration", time.Minute, "with -scale: how long each concurrent run plays")
	flag.DurationVar(&so.timeout, "scale-timeout", 30*time.Second, "with -scale: the client's timeout per call")
	flag.Parse()
	code := play(o, so, *scale, *levels)
	removeLocalBinary()
	os.Exit(code)
}

// play runs the mode the flags chose and returns the command's exit code.
func play(o options, so scaleOptions, scale bool, levels string) int {
	if scale {
		for _, f := range strings.Split(levels, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 2 {
				fmt.Fprintln(os.Stderr, "load: -scale-agents takes numbers of at least 2, comma-separated")
				return 2
			}
			so.levels = append(so.levels, n)
		}
		if so.tasks < 1 {
			fmt.Fprintln(os.Stderr, "load: -scale-tasks must be at least 1")
			return 2
		}
		if err := runScale(context.Background(), o, so); err != nil {
			fmt.Fprintln(os.Stderr, "load:", err)
			return 2
		}
		return 0
	}
	if o.agents < 2 || o.team < 2 || o.think <= 0 {
		fmt.Fprintln(os.Stderr, "load: -agents and -team must be at least 2, -think positive")
		return 2
	}
	ok, err := run(context.Background(), o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		return 2
	}
	if !ok {
		return 1
	}
	return 0
}

func defaultState() string {
	dir := os.Getenv("PRICKLE_STATE_DIR")
	if dir == "" {
		dir = ".prickle"
	}
	return filepath.Join(dir, "local.json")
}

// options are the command's flags.
type options struct {
	agents, team, maxUnexpected int
	duration, think, settle     time.Duration
	state                       string
	start                       bool
}

// readStack reads a running stack's local.json: the load needs its MCP URL,
// its DynamoDB endpoint and its tables.
func readStack(path string) (localjson.State, error) {
	if _, err := os.Stat(path); err != nil {
		return localjson.State{}, fmt.Errorf("read %s (is `make local` running? or pass -start): %w", path, err)
	}
	s, err := localjson.Read(path)
	if err != nil {
		return s, err
	}
	if s.MCPURL == "" || s.DynamoDBEndpoint == "" {
		return s, fmt.Errorf("%s names no mcp_url or dynamodb_endpoint", path)
	}
	return s, nil
}
