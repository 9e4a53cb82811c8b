package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// RunE2E runs the MCP client scenarios of infra/dev/e2e against the RIE stack,
// then proves the two routes: a 2026-07-28 tool call (Mcp-Name) reaches the
// tool's function without mcp; a 2025-11-25 one goes mcp → Lambda Invoke → tool.
func (s *Stack) RunE2E(ctx context.Context, root, suites string) error {
	admin := filepath.Join(s.opts.StateDir, "bin", "prickle-admin")
	build := exec.CommandContext(ctx, "go", "build", "-o", admin, "./infra/cmd/prickle-admin")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("build infra/cmd/prickle-admin: %v\n%s", err, out)
	}
	env := append(os.Environ(),
		"PRICKLE_LOCAL_JSON="+s.StatePath, "PRICKLE_STATE_DIR="+s.opts.StateDir, "PRICKLE_ADMIN="+admin)
	if s.opts.SAM {
		// The suites probe /mcp with a short timeout: start mcp's container first.
		if err := s.warm(ctx); err != nil {
			return err
		}
	}
	var failed []string
	for _, suite := range strings.Fields(suites) {
		fmt.Printf("\n=============== rie %s ===============\n", suite)
		var err error
		switch suite {
		case "ts", "raw":
			files, _ := filepath.Glob(filepath.Join(root, "infra", "dev", "e2e", suite, "*.test.mjs"))
			sort.Strings(files)
			args := append([]string{"--test", "--test-concurrency=1", "--test-timeout=300000", "--test-reporter=spec"}, files...)
			err = run(ctx, root, env, "node", args...)
		case "claude-mcp-add":
			err = run(ctx, root, env, "node", "--test", "--test-timeout=600000", "--test-reporter=spec",
				filepath.Join(root, "infra", "dev", "e2e", "claude", "mcp-add.test.mjs"))
		case "py":
			err = run(ctx, root, env, filepath.Join(root, ".venv", "bin", "python"), "-m", "pytest", filepath.Join(root, "infra", "dev", "e2e", "py"), "-q", "-p", "no:cacheprovider")
		case "routing":
			if s.opts.Gateway == "http" {
				err = s.checkFront(ctx)
			} else {
				err = s.checkRouting(ctx)
			}
		default:
			err = fmt.Errorf("unknown suite %q", suite)
		}
		fmt.Printf("=============== rie %s: %v\n", suite, status(err))
		if err != nil {
			failed = append(failed, suite+": "+err.Error())
		}
	}
	s.deliver.Wait()
	if len(failed) > 0 {
		return errors.New(strings.Join(failed, "; "))
	}
	return nil
}

// warm sends /mcp one GET (mcp answers it without the store), so that
// sam local start-api has mcp's container running before the suites.
func (s *Stack) warm(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.MCPURL, nil)
	if err != nil {
		return fmt.Errorf("warm up: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("warm up %s: %w", s.MCPURL, err)
	}
	resp.Body.Close()
	return nil
}

func status(err error) string {
	if err != nil {
		return "FAILED"
	}
	return "ok"
}

func run(ctx context.Context, dir string, env []string, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, os.Stdout, os.Stderr
	return cmd.Run()
}

// post sends one MCP request to the stack's /mcp as alice/writer.
func (s *Stack) post(ctx context.Context, headers map[string]string, body string) (int, string, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.MCPURL, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+s.Local.Tokens["alice/writer"])
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}

// The same get_task call in each protocol era, and the headers each sends.
const (
	exampleArgs = `{"task_id":"example-task-id"}`
	modernCall  = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_task","arguments":` + exampleArgs +
		`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"rie","version":"0"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
	legacyInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"rie","version":"0"}}}`
	legacyCall = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_task","arguments":` + exampleArgs + `}}`
)

var (
	modernHeaders = map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "get_task"}
	legacyHeaders = map[string]string{"MCP-Protocol-Version": "2025-11-25"}
)

// checkRouting counts invocations around one call of each era.
func (s *Stack) checkRouting(ctx context.Context) error {
	call := func(headers map[string]string, body string) (int, string, error) { return s.post(ctx, headers, body) }
	before := s.Counts()
	code, body, err := call(modernHeaders, modernCall)
	if err != nil || code != 200 || !strings.Contains(body, "example-task-id") {
		return fmt.Errorf("2026-07-28 get_task: %d %v %.300s", code, err, body)
	}
	after := s.Counts()
	if d := after["get_task"] - before["get_task"]; d != 1 {
		return fmt.Errorf("2026-07-28 tools/call invoked get_task %d times, want 1", d)
	}
	if d := after["mcp"] - before["mcp"]; d != 0 {
		return fmt.Errorf("2026-07-28 tools/call with Mcp-Name invoked mcp %d times, want 0 (routed straight to the tool)", d)
	}
	fmt.Println("ok  2026-07-28 tools/call get_task: router → get_task function (mcp not invoked)")

	before = after
	if code, body, err = call(nil, legacyInit); err != nil || code != 200 {
		return fmt.Errorf("2025-11-25 initialize: %d %v %.300s", code, err, body)
	}
	code, body, err = call(legacyHeaders, legacyCall)
	if err != nil || code != 200 || !strings.Contains(body, "example-task-id") {
		return fmt.Errorf("2025-11-25 get_task: %d %v %.300s", code, err, body)
	}
	after = s.Counts()
	if d := after["mcp"] - before["mcp"]; d != 2 {
		return fmt.Errorf("2025-11-25 initialize + tools/call invoked mcp %d times, want 2", d)
	}
	if d := after["get_task"] - before["get_task"]; d != 1 {
		return fmt.Errorf("2025-11-25 tools/call reached get_task %d times, want 1 (mcp → Lambda Invoke → get_task)", d)
	}
	fmt.Println("ok  2025-11-25 tools/call get_task: router → mcp function → Lambda Invoke → get_task function")
	return nil
}

// Measure prints each function's binary size and the emulator's INIT
// duration (first invocation of each; events and proxy requests that make
// the function start without side effects).
func (s *Stack) Measure(ctx context.Context, w io.Writer) error {
	for _, f := range s.sorted() {
		payload := []byte(`{"httpMethod":"GET","path":"/","headers":{},"body":""}`)
		switch f.Name {
		case "notify", "wakeup", "route", "step-expiry", "task-events":
			payload = []byte(`{}`) // decoding fails after init: enough to start the runtime
		}
		_, _ = s.Invoke(ctx, invokeInput(f.Name, payload))
	}
	time.Sleep(200 * time.Millisecond)
	inits := s.InitDurations()
	fmt.Fprintln(w, "| function | binary (linux/arm64, stripped) | binary (native build, stripped) | INIT duration (RIE) |")
	fmt.Fprintln(w, "|---|---:|---:|---:|")
	for _, f := range s.sorted() {
		arm := "n/a"
		if fi, err := os.Stat(filepath.Join(s.opts.Root, ".aws-sam", "build", f.LogicalID, "bootstrap")); err == nil {
			arm = mb(fi.Size())
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s ms |\n", f.Name, arm, mb(f.Size), trimMs(inits[f.Name]))
	}
	return nil
}

func mb(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

func trimMs(v string) string {
	var f float64
	if _, err := fmt.Sscan(v, &f); err != nil {
		return "?"
	}
	return fmt.Sprintf("%.1f", f)
}
