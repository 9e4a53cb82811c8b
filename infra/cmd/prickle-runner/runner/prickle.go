package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/useprickle/prickle/shared/domain/wakeup"
	"github.com/useprickle/prickle/shared/kit/wait"
)

// TaskView is what the runner needs to know of a run's task.
type TaskView struct {
	Project   string
	State     string
	Assignee  string
	Requester string
	// Marks counts the assignee's own checkpoints, results and declines in the
	// history: a run that added none ends "without a checkpoint of its own".
	Marks int
}

// Party is the agent a wake-up for reason runs as: the requester when a
// result came back for review, the assignee otherwise.
func (v TaskView) Party(reason string) string {
	if reason == wakeup.ReasonResultReturned {
		return v.Requester
	}
	return v.Assignee
}

// Tasks is how the runner reads a task, leaves a checkpoint and ends a run's
// token, with a given token.
type Tasks interface {
	Task(ctx context.Context, token, taskID string) (TaskView, error)
	Checkpoint(ctx context.Context, token, taskID, progress string, nextSteps []string) error
	// EndRun ends a run's token, reporting its usage when known (nil: none).
	EndRun(ctx context.Context, runToken string, usage *Usage) error
	// MayStart asks whether a run a webhook delivered may start under its
	// agent's daily model-spend cap; held, Prickle has put its wake-up back
	// to wait (until when is said) and ended its token.
	MayStart(ctx context.Context, runToken, reason string) (held bool, until time.Time, err error)
}

// ErrRefused wraps a tool's domain refusal (isError): another token would not help.
var ErrRefused = errors.New("refused by Prickle")

// MCPTasks talks to Prickle's MCP endpoint with the mcp-go client (and to
// its runner endpoint to end a run's token).
type MCPTasks struct {
	// Base is Prickle's base URL; URL its MCP endpoint.
	Base, URL string
	HTTP      *http.Client
}

// NewMCPTasks builds an MCPTasks for the Prickle at base with a 30-second HTTP timeout.
func NewMCPTasks(base string) *MCPTasks {
	base = strings.TrimRight(base, "/")
	return &MCPTasks{Base: base, URL: base + "/mcp", HTTP: &http.Client{Timeout: 30 * time.Second}}
}

// RunMCP is the MCP client of a run's own helpers (the hook, codex-run),
// which know Prickle by the run's PRICKLE_MCP_URL; timeout bounds each call.
func RunMCP(mcpURL string, timeout time.Duration) *MCPTasks {
	return &MCPTasks{URL: mcpURL, HTTP: &http.Client{Timeout: timeout}}
}

// EndRun ends a run's token (POST /runner/ended with it, and its usage as
// the body): the run is over, and a later wake-up of its task brings a new
// one. A token already ended or expired is not an error. A usage report
// Prickle refuses (400) is left out and the token ended without it; the
// error then wraps ErrUsageRefused.
func (m *MCPTasks) EndRun(ctx context.Context, runToken string, usage *Usage) error {
	var body []byte
	if usage != nil {
		var err error
		if body, err = json.Marshal(usage); err != nil {
			return fmt.Errorf("end run: %w", err)
		}
	}
	// A retry after a lost answer finds the token ended: 401, which is done.
	code, answer, _, err := m.runPost(ctx, EndedPath, runToken, body)
	if err != nil {
		return fmt.Errorf("end run: %w", err)
	}
	if code == http.StatusBadRequest && body != nil {
		if err := m.EndRun(ctx, runToken, nil); err != nil {
			return err
		}
		return fmt.Errorf("%w: %s", ErrUsageRefused, clip(string(answer), 300))
	}
	switch code {
	case http.StatusNoContent, http.StatusOK, http.StatusUnauthorized:
		return nil
	}
	return fmt.Errorf("end run: HTTP %d", code)
}

// runPost posts body to Prickle's path with a run token and returns the
// status and at most 4 KiB of the answer. A request that got no answer
// (a network error, a reset connection, a timeout) or a 5xx or 429 is sent
// again, up to runPostAttempts times in all; retried says a later attempt
// gave the answer, so an earlier one may have landed with its answer lost.
func (m *MCPTasks) runPost(ctx context.Context, path, runToken string, body []byte) (code int, answer []byte, retried bool, err error) {
	for attempt := 1; ; attempt++ {
		code, answer, err = m.runPostOnce(ctx, path, runToken, body)
		again := err != nil || code >= 500 || code == http.StatusTooManyRequests
		if !again || attempt == runPostAttempts || ctx.Err() != nil {
			return code, answer, attempt > 1, err
		}
		if wait.For(ctx, time.Duration(attempt)*runPostBackoff) != nil {
			return code, answer, attempt > 1, err
		}
	}
}

// runPostAttempts and runPostBackoff bound runPost's retries: 3 attempts,
// 0.5 s then 1 s apart.
const (
	runPostAttempts = 3
	runPostBackoff  = 500 * time.Millisecond
)

func (m *MCPTasks) runPostOnce(ctx context.Context, path, runToken string, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.Base+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+runToken)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := m.HTTP.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, answer, nil
}

// call runs one tool with token and returns the JSON text of its result.
func (m *MCPTasks) call(ctx context.Context, token, tool string, args map[string]any) ([]byte, error) {
	c, err := client.NewStreamableHttpClient(m.URL,
		transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}),
		transport.WithHTTPBasicClient(m.HTTP))
	if err != nil {
		return nil, fmt.Errorf("%s: MCP client: %w", tool, err)
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		return nil, fmt.Errorf("%s: start MCP client: %w", tool, err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ClientInfo = mcp.Implementation{Name: "prickle-runner", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		return nil, fmt.Errorf("%s: initialize: %w", tool, err)
	}
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = tool, args
	res, err := c.CallTool(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tool, err)
	}
	var text string
	for _, ct := range res.Content {
		if tc, ok := mcp.AsTextContent(ct); ok {
			text = tc.Text
			break
		}
	}
	if res.IsError {
		return nil, fmt.Errorf("%s: %w: %s", tool, ErrRefused, clip(text, 500))
	}
	return []byte(text), nil
}

// getTask is the part of get_task's result the runner reads.
type getTask struct {
	Task struct {
		Project   string `json:"project"`
		State     string `json:"state"`
		Assignee  string `json:"assignee"`
		Requester string `json:"requester"`
	} `json:"task"`
	History []struct {
		By     string `json:"by"`
		Action string `json:"action"`
	} `json:"history"`
}

// Task reads the task with get_task.
func (m *MCPTasks) Task(ctx context.Context, token, taskID string) (TaskView, error) {
	b, err := m.call(ctx, token, "get_task", map[string]any{"task_id": taskID})
	if err != nil {
		return TaskView{}, err
	}
	var g getTask
	if err := json.Unmarshal(b, &g); err != nil {
		return TaskView{}, fmt.Errorf("get_task %s: result is not a task: %w", taskID, err)
	}
	v := TaskView{Project: g.Task.Project, State: g.Task.State, Assignee: g.Task.Assignee, Requester: g.Task.Requester}
	for _, h := range g.History {
		if h.By == v.Assignee && (h.Action == "checkpoint" || h.Action == "return_result" || h.Action == "decline") {
			v.Marks++
		}
	}
	return v, nil
}

// MaxProgress is the longest progress save_checkpoint takes (its input
// schema's maxLength; a test ties the two).
const MaxProgress = 2000

// Checkpoint saves a checkpoint with save_checkpoint.
func (m *MCPTasks) Checkpoint(ctx context.Context, token, taskID, progress string, nextSteps []string) error {
	_, err := m.call(ctx, token, "save_checkpoint", map[string]any{
		"task_id": taskID, "progress": clip(progress, MaxProgress), "decisions": []string{},
		"files_touched": []string{}, "next_steps": nextSteps, "open_questions": []string{},
	})
	return err
}

// clip keeps at most n characters of s.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n])
}

// StepAsk is one request_step call: the exact call the owner is asked about.
type StepAsk struct {
	ToolName  string          `json:"tool_name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Reason    string          `json:"reason,omitempty"`
}

// StepAnswer is request_step's answer to a permission layer
// (docs/running-agents.md, "Claude Code as a woken run"): allow with the
// input the owner allowed, or deny.
type StepAnswer struct {
	StepID       string          `json:"step_id"`
	Status       string          `json:"status"`
	Behavior     string          `json:"behavior"`
	Message      string          `json:"message"`
	UpdatedInput json.RawMessage `json:"updatedInput,omitempty"`
}

// Steps asks a run's owner with request_step, with the run's token.
type Steps interface {
	RequestStep(ctx context.Context, token string, a StepAsk) (StepAnswer, error)
}

// RequestStep asks with request_step; a refusal (isError) wraps ErrRefused.
func (m *MCPTasks) RequestStep(ctx context.Context, token string, a StepAsk) (StepAnswer, error) {
	args := map[string]any{"tool_name": a.ToolName, "input": a.Input}
	if a.ToolUseID != "" {
		args["tool_use_id"] = a.ToolUseID
	}
	if a.Reason != "" {
		args["reason"] = a.Reason
	}
	b, err := m.call(ctx, token, "request_step", args)
	if err != nil {
		return StepAnswer{}, err
	}
	var ans StepAnswer
	if err := json.Unmarshal(b, &ans); err != nil || ans.Status == "" || ans.Behavior == "" {
		return StepAnswer{}, fmt.Errorf("request_step: the answer is not a step: %s", clip(string(b), 300))
	}
	return ans, nil
}
