// Package server builds the MCP server (mcp-go) that serves the
// catalog's tools over the team service: it shapes every answer as
// structuredContent plus the same JSON as text (request_step answers a run
// token as text alone, for its permission layer), and a domain refusal as an
// isError result. Kept apart from the catalog so pages that only describe
// the tools do not link the server.
package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/mcp/catalog"
	"github.com/useprickle/prickle/shared/team"
)

// Version is the server version reported to MCP clients.
const Version = "0.1.0"

const instructions = "Prickle is where your team's agents and their owners work as one team. " +
	"Read the room first (read_room), hand off tasks with a clear packet (hand_off_task), " +
	"checkpoint as you go, ask your owner before destructive, spending or outbound steps (request_step, woken runs only), " +
	"and return results with evidence (return_result). Your identity comes from your token, never from an argument."

// New builds an MCP server that serves the named tools (all of them
// when names is empty) over the team service.
func New(svc *team.Service, log *slog.Logger, names ...string) (*server.MCPServer, error) {
	s := server.NewMCPServer("prickle", Version,
		server.WithToolCapabilities(false),
		server.WithInstructions(instructions),
		server.WithTitle("Prickle"),
		server.WithRecovery(),
		server.WithToolFilter(permissionLayerView),
	)
	selected := catalog.All()
	if len(names) > 0 {
		selected = nil
		for _, n := range names {
			t, ok := catalog.Lookup(n)
			if !ok {
				return nil, fmt.Errorf("catalog has no tool %q", n)
			}
			selected = append(selected, t)
		}
	}
	for _, t := range selected {
		s.AddTool(t.MCPTool(), handler(t, svc, log))
	}
	return s, nil
}

// handler runs a tool for the caller found in the request context and
// shapes the answer: structuredContent plus the same JSON as text, or an
// isError result for a domain refusal or a temporary database failure.
func handler(t *catalog.Tool, svc *team.Service, log *slog.Logger) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		c, ok := identity.CallerFrom(ctx)
		if !ok {
			return nil, errors.New("unauthenticated call reached a tool")
		}
		// The raw bytes keep numbers exact: an approved spending step must
		// replay the amount it was asked with, not a float64 of it.
		args := req.Params.RawArguments
		if len(args) == 0 {
			var err error
			if args, err = json.Marshal(req.Params.Arguments); err != nil {
				return nil, fmt.Errorf("re-encode arguments: %w", err)
			}
		}
		var out any
		var err error
		if argumentsChecked(ctx, t.Name, args) {
			out, err = t.RunChecked(ctx, svc, c, args)
		} else {
			out, err = t.Run(ctx, svc, c, args)
		}
		var refusal *task.Refusal
		var invalid *catalog.InvalidArgumentsError
		switch {
		case errors.As(err, &refusal):
			return mcp.NewToolResultError(refusal.Msg), nil
		case errors.As(err, &invalid):
			return mcp.NewToolResultError(invalid.Error()), nil
		case err != nil:
			if outcome, msg, ok := temporary(t.Name, err); ok {
				log.WarnContext(ctx, "tool failed for now", "tool", t.Name, "caller", c.Agent, "outcome", outcome, "error", err.Error())
				setOutcome(ctx, outcome)
				return mcp.NewToolResultError(msg), nil
			}
			log.ErrorContext(ctx, "tool failed", "tool", t.Name, "caller", c.Agent, "error", err.Error())
			return nil, fmt.Errorf("%s failed inside Prickle; nothing is lost, try again shortly", t.Name)
		}
		body, err := json.Marshal(out)
		if err != nil {
			return nil, fmt.Errorf("encode %s result: %w", t.Name, err)
		}
		if answersPermissionLayer(t.Name, c) {
			return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(string(body))}}, nil
		}
		return &mcp.CallToolResult{
			Content:           []mcp.Content{mcp.NewTextContent(string(body))},
			StructuredContent: json.RawMessage(body),
		}, nil
	}
}

// answersPermissionLayer reports whether the tool's answer goes to a
// permission layer: request_step called with a run token. Claude Code
// accepts a permission answer only as exactly one text block holding the
// JSON, and reads structuredContent instead whenever a result carries it,
// so such a result carries the JSON as its only content.
func answersPermissionLayer(tool string, c identity.Caller) bool {
	return tool == catalog.PermissionTool && c.Kind == identity.KindRun
}

// permissionLayerView shows a run-token connection request_step without
// its outputSchema (Claude Code refuses a result without structuredContent
// from a tool that declares one); agent tokens see the seed schemas.
func permissionLayerView(ctx context.Context, tools []mcp.Tool) []mcp.Tool {
	c, _ := identity.CallerFrom(ctx)
	if c.Kind != identity.KindRun {
		return tools
	}
	out := make([]mcp.Tool, len(tools))
	for i, t := range tools {
		if t.Name == catalog.PermissionTool {
			t.RawOutputSchema = nil
		}
		out[i] = t
	}
	return out
}
