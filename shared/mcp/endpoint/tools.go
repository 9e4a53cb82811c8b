package endpoint

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	mcpgo "github.com/mark3labs/mcp-go/server"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/mcp/catalog"
)

// The MCP side of the edge: mcp-go servers over the catalog and the team
// service. Every answer is structuredContent plus the same JSON as text
// (request_step answers a run token as text alone, for its permission
// layer), a domain refusal an isError result.
//
// Nothing reaches a tool handler through the request context. The edge keeps
// servers for everything but tools/call (initialize, tools/list, ping,
// server/discover), one per view of the tools, chosen by the caller's token:
// what an agent token sees and what a run token sees (one server when the
// two views agree). A tools/call of a tool the endpoint serves gets a
// server of its own, built for that one call around a toolCall the edge
// fills in: the caller, the arguments it checked, and the slot where a
// temporary failure leaves its outcome for the request log.

// Version is the server version reported to MCP clients.
const Version = "0.1.0"

const instructions = "Prickle is where your team's agents and their owners work as one team. " +
	"Read the room first (read_room), hand off tasks with a clear packet (hand_off_task), " +
	"checkpoint as you go, ask your owner before destructive, spending or outbound steps (request_step, woken runs only), " +
	"and return results with evidence (return_result). Your identity comes from your token, never from an argument."

// servers are the mcp-go servers the edge keeps, over HTTP: the tools as an
// agent token lists them, and as a run token does.
type servers struct {
	agent http.Handler
	run   func() http.Handler
}

// newServers builds the kept servers of the named tools (all of them when
// names is empty); their tools answer tools/list only, as every tools/call
// of a tool the endpoint serves is served by its own server (serveCall).
func newServers(log *slog.Logger, names ...string) (map[string]*catalog.Tool, servers, error) {
	selected := catalog.All()
	if len(names) > 0 {
		selected = nil
		for _, n := range names {
			t, ok := catalog.Lookup(n)
			if !ok {
				return nil, servers{}, fmt.Errorf("catalog has no tool %q", n)
			}
			selected = append(selected, t)
		}
	}
	served := make(map[string]*catalog.Tool, len(selected))
	agent := newServer()
	for _, t := range selected {
		served[t.Name] = t
		agent.AddTool(t.MCPTool(), listedOnly)
	}
	kept := servers{agent: transport(agent, log)}
	kept.run = func() http.Handler { return kept.agent }
	if _, ok := served[catalog.PermissionTool]; ok {
		// Only request_step looks different to a run token. Registering a
		// tool costs mcp-go a parse of its schema, so the run tokens' server
		// is built when one first needs it, not in every cold start.
		kept.run = sync.OnceValue(func() http.Handler {
			run := newServer()
			for _, t := range selected {
				run.AddTool(runView(t), listedOnly)
			}
			return transport(run, log)
		})
	}
	return served, kept, nil
}

// of is the kept server whose view the caller gets.
func (s servers) of(c identity.Caller) http.Handler {
	if c.Kind == identity.KindRun {
		return s.run()
	}
	return s.agent
}

func newServer() *mcpgo.MCPServer {
	return mcpgo.NewMCPServer("prickle", Version,
		mcpgo.WithToolCapabilities(false),
		mcpgo.WithInstructions(instructions),
		mcpgo.WithTitle("Prickle"),
		mcpgo.WithRecovery(),
	)
}

// transport serves an mcp-go server over streamable HTTP, statelessly, for
// both protocol eras.
func transport(s *mcpgo.MCPServer, log *slog.Logger) http.Handler {
	return mcpgo.NewStreamableHTTPServer(s,
		mcpgo.WithStateLess(true),
		mcpgo.WithDisableStreaming(true),
		mcpgo.WithStreamableHTTPLogger(log),
	)
}

// listedOnly is the handler of the kept servers' tools, which no call
// reaches: the edge serves each tools/call of a tool it serves with that
// call's own server. Were one to reach it, it would have no caller: it
// answers a JSON-RPC error and runs nothing.
func listedOnly(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return nil, fmt.Errorf("%s was called on a server that only lists it", req.Params.Name)
}

// runView is the tool as a run token lists it: request_step without its
// outputSchema (Claude Code refuses a result without structuredContent
// from a tool that declares one); agent tokens see the seed schemas.
func runView(t *catalog.Tool) mcp.Tool {
	m := t.MCPTool()
	if t.Name == catalog.PermissionTool {
		m.RawOutputSchema = nil
	}
	return m
}

// toolCall is one tools/call as the edge serves it.
type toolCall struct {
	tool   *catalog.Tool
	caller identity.Caller
	// checked are the arguments the edge checked, nil when it checked none
	// (the routing headers name another call than the body).
	checked *catalog.Arguments
	// outcome is what a temporary failure leaves for the request log
	// ("throttled", "unavailable"); empty otherwise.
	outcome string
}

// serveCall serves one tools/call with a server built for it alone, whose
// one tool's handler holds the call. That server answers nothing but this
// call, so it holds the tool by name (tools/list comes from the kept
// servers, with the catalog's schemas): registering a tool's schema costs
// mcp-go a parse of it, more than the rest of the server.
func (h *Handler) serveCall(w http.ResponseWriter, r *http.Request, c *toolCall) {
	s := newServer()
	s.AddTool(mcp.Tool{Name: c.tool.Name}, func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return h.runTool(ctx, c, req)
	})
	transport(s, h.cfg.Log).ServeHTTP(w, r)
}

// runTool runs the call's tool for its caller and shapes the answer:
// structuredContent plus the same JSON as text, or an isError result for a
// domain refusal or a temporary database failure.
func (h *Handler) runTool(ctx context.Context, c *toolCall, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	t, log := c.tool, h.cfg.Log
	// The raw bytes keep numbers exact: an approved spending step must
	// replay the amount it was asked with, not a float64 of it.
	args := req.Params.RawArguments
	var out any
	var err error
	if c.checked != nil && bytes.Equal(args, c.checked.Raw()) {
		out, err = t.RunChecked(ctx, h.cfg.Service, c.caller, *c.checked)
	} else {
		if len(args) == 0 {
			if args, err = json.Marshal(req.Params.Arguments); err != nil {
				return nil, fmt.Errorf("re-encode arguments: %w", err)
			}
		}
		out, err = t.Run(ctx, h.cfg.Service, c.caller, args)
	}
	var refusal *task.Refusal
	var invalid *catalog.InvalidArgumentsError
	switch {
	case errors.As(err, &refusal):
		return mcp.NewToolResultError(refusal.Msg), nil
	case errors.As(err, &invalid):
		return mcp.NewToolResultError(invalid.Error()), nil
	case err != nil && errors.Is(err, context.Canceled) && ctx.Err() != nil:
		// The client went away (its run stopped or killed) while the call was
		// in flight: nobody reads the answer, and a write it started may have
		// landed or not, as after any lost connection. Not a failure of Prickle's.
		log.WarnContext(ctx, "tool call abandoned by its client", "tool", t.Name, "caller", c.caller.Agent, "error", err.Error())
		c.outcome = OutcomeCancelled
		return mcp.NewToolResultError(t.Name + " was cancelled: the request ended before it finished"), nil
	case err != nil:
		if outcome, msg, ok := temporary(t.Name, err); ok {
			log.WarnContext(ctx, "tool failed for now", "tool", t.Name, "caller", c.caller.Agent, "outcome", outcome, "error", err.Error())
			c.outcome = outcome
			return mcp.NewToolResultError(msg), nil
		}
		log.ErrorContext(ctx, "tool failed", "tool", t.Name, "caller", c.caller.Agent, "error", err.Error())
		return nil, fmt.Errorf("%s failed inside Prickle; nothing is lost, try again shortly", t.Name)
	}
	body, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("encode %s result: %w", t.Name, err)
	}
	if answersPermissionLayer(t.Name, c.caller) {
		return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(string(body))}}, nil
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{mcp.NewTextContent(string(body))},
		StructuredContent: json.RawMessage(body),
	}, nil
}

// OutcomeCancelled is the request log's outcome of a call whose client went
// away before its answer: not Prickle's failure, and no alarm counts it.
const OutcomeCancelled = "cancelled"

// answersPermissionLayer reports whether the tool's answer goes to a
// permission layer: request_step called with a run token. Claude Code
// accepts a permission answer only as exactly one text block holding the
// JSON, and reads structuredContent instead whenever a result carries it,
// so such a result carries the JSON as its only content.
func answersPermissionLayer(tool string, c identity.Caller) bool {
	return tool == catalog.PermissionTool && c.Kind == identity.KindRun
}
