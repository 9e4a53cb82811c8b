package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/useprickle/prickle/shared/mcp/catalog"
)

// frontCalls is how many warm get_task calls checkFront times through mcp.
const frontCalls = 30

// checkFront proves the HTTP API mode's one route for tool calls: a call of
// either era (with or without Mcp-Name) goes HTTP API → mcp → Lambda Invoke
// → the tool's function; the web pages are served by web. Then it times
// warm calls and prints what the front adds per call: the mcp invocation's
// Duration, billed in full, while it waits for the tool's.
func (s *Stack) checkFront(ctx context.Context) error {
	before := s.Counts()
	code, body, err := s.post(ctx, modernHeaders, modernCall)
	if err != nil || code != 200 || !strings.Contains(body, "example-task-id") {
		return fmt.Errorf("2026-07-28 get_task: %d %v %.300s", code, err, body)
	}
	after := s.Counts()
	if d := after["mcp"] - before["mcp"]; d != 1 {
		return fmt.Errorf("2026-07-28 tools/call invoked mcp %d times, want 1 (the HTTP API routes no header)", d)
	}
	if d := after["get_task"] - before["get_task"]; d != 1 {
		return fmt.Errorf("2026-07-28 tools/call reached get_task %d times, want 1 (mcp → Lambda Invoke → get_task)", d)
	}
	fmt.Println("ok  2026-07-28 tools/call get_task: HTTP API → mcp function → Lambda Invoke → get_task function")

	before = after
	if code, body, err = s.post(ctx, nil, legacyInit); err != nil || code != 200 {
		return fmt.Errorf("2025-11-25 initialize: %d %v %.300s", code, err, body)
	}
	code, body, err = s.post(ctx, legacyHeaders, legacyCall)
	if err != nil || code != 200 || !strings.Contains(body, "example-task-id") {
		return fmt.Errorf("2025-11-25 get_task: %d %v %.300s", code, err, body)
	}
	after = s.Counts()
	if d := after["mcp"] - before["mcp"]; d != 2 {
		return fmt.Errorf("2025-11-25 initialize + tools/call invoked mcp %d times, want 2", d)
	}
	if d := after["get_task"] - before["get_task"]; d != 1 {
		return fmt.Errorf("2025-11-25 tools/call reached get_task %d times, want 1", d)
	}
	fmt.Println("ok  2025-11-25 tools/call get_task: HTTP API → mcp function → Lambda Invoke → get_task function")

	before = after
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(s.MCPURL, "/mcp")+"/docs/reference/mcp-tools?tool=get_task", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("GET the tool reference: %w", err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Content-Type"), "text/html") || !bytes.Contains(page, []byte("get_task")) {
		return fmt.Errorf("GET the tool reference through the HTTP API: %d %s %.200s", resp.StatusCode, resp.Header.Get("Content-Type"), page)
	}
	if d := s.Counts()["web"] - before["web"]; d != 1 {
		return fmt.Errorf("GET the tool reference invoked web %d times, want 1", d)
	}
	fmt.Println("ok  GET /docs/reference/mcp-tools?tool=get_task: HTTP API → web function (payload 2.0)")

	if err := s.attackFront(ctx); err != nil {
		return err
	}

	for range frontCalls {
		if code, body, err := s.post(ctx, modernHeaders, modernCall); err != nil || code != 200 {
			return fmt.Errorf("timed get_task: %d %v %.300s", code, err, body)
		}
	}
	mcp, err := s.durations("mcp", frontCalls)
	if err != nil {
		return err
	}
	tool, err := s.durations("get_task", frontCalls)
	if err != nil {
		return err
	}
	fmt.Printf("front  %d warm get_task calls through mcp (RIE Duration, ms): mcp median %.1f p90 %.1f; get_task median %.1f p90 %.1f; mcp adds median %.1f ms billed per call over the tool's own\n",
		frontCalls, quantile(mcp, 0.5), quantile(mcp, 0.9), quantile(tool, 0.5), quantile(tool, 0.9), quantile(mcp, 0.5))
	return nil
}

// attackFront: through the HTTP API, where every call reaches mcp, a call
// without a token, with routing headers that name another tool than the
// body, or from a browser origin the stack does not allow reaches no tool.
func (s *Stack) attackFront(ctx context.Context) error {
	tools := func() int {
		n, c := 0, s.Counts()
		for _, t := range catalog.All() {
			n += c[t.Name]
		}
		return n
	}
	cancel := strings.Replace(strings.Replace(modernCall, `"name":"get_task"`, `"name":"cancel_task"`, 1), exampleArgs, `{"task_id":"example-task-id","reason":"attack"}`, 1)
	cases := []struct {
		name    string
		headers map[string]string
		body    string
		status  int // 0: any status, the body must be a JSON-RPC error
	}{
		{"no token", map[string]string{"Authorization": ""}, modernCall, http.StatusUnauthorized},
		{"Mcp-Name get_task on a cancel_task body", modernHeaders, cancel, 0},
		{"a browser origin not allowed", map[string]string{"Origin": "https://evil.example", "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "get_task"}, modernCall, http.StatusForbidden},
	}
	for _, tc := range cases {
		before := tools()
		code, body, err := s.post(ctx, tc.headers, tc.body)
		if err != nil {
			return fmt.Errorf("attack %s: %w", tc.name, err)
		}
		if tc.status != 0 && code != tc.status {
			return fmt.Errorf("attack %s: answered %d, want %d: %.300s", tc.name, code, tc.status, body)
		}
		if tc.status == 0 && (!strings.Contains(body, `"error"`) || strings.Contains(body, `"structuredContent"`)) {
			return fmt.Errorf("attack %s: answered %d, want a JSON-RPC error: %.300s", tc.name, code, body)
		}
		if d := tools() - before; d != 0 {
			return fmt.Errorf("attack %s: %d tool functions invoked, want none", tc.name, d)
		}
		fmt.Printf("ok  attack through the HTTP API refused (%d), no tool invoked: %s\n", code, tc.name)
	}
	return nil
}

// durations reads the last n invocations' Duration (ms) from a function's
// emulator log (`REPORT RequestId: … Duration: 12.34 ms …`).
func (s *Stack) durations(fn string, n int) ([]float64, error) {
	f := s.Functions[fn]
	b, err := os.ReadFile(f.LogPath)
	if err != nil {
		return nil, fmt.Errorf("read %s log: %w", fn, err)
	}
	var out []float64
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, "REPORT RequestId:") {
			continue
		}
		_, rest, ok := strings.Cut(line, "\tDuration: ")
		if !ok {
			continue
		}
		v, _, _ := strings.Cut(rest, " ms")
		d, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return nil, fmt.Errorf("%s log: %q: %w", fn, line, err)
		}
		out = append(out, d)
	}
	if len(out) < n {
		return nil, fmt.Errorf("%s log has %d REPORT lines, want at least %d", fn, len(out), n)
	}
	return out[len(out)-n:], nil
}

// quantile is the q-quantile (nearest rank) of xs.
func quantile(xs []float64, q float64) float64 {
	s := append([]float64{}, xs...)
	sort.Float64s(s)
	i := int(q*float64(len(s))+0.5) - 1
	return s[max(0, min(i, len(s)-1))]
}
