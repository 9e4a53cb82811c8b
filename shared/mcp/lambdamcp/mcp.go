// Package lambdamcp runs Prickle's MCP endpoint as a Lambda function: a
// tool's own function, or the mcp front, which hands tool calls to the tool
// functions by Lambda Invoke.
package lambdamcp

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/useprickle/prickle/shared/auth/oauthresource"
	"github.com/useprickle/prickle/shared/aws/awsenv"
	"github.com/useprickle/prickle/shared/aws/bus"
	"github.com/useprickle/prickle/shared/aws/lambdahttp"
	"github.com/useprickle/prickle/shared/aws/settings"
	"github.com/useprickle/prickle/shared/aws/store"
	"github.com/useprickle/prickle/shared/mcp/catalog"
	"github.com/useprickle/prickle/shared/mcp/endpoint"
	"github.com/useprickle/prickle/shared/team"
)

// StartMCP serves the MCP endpoint for the given tools (all of them for the
// mcp front) with the store its environment names; it never returns.
func StartMCP(tools ...string) {
	lambdahttp.Run(func(_ context.Context, log *slog.Logger) (http.Handler, error) { return NewMCP(log, tools...) })
}

// NewMCP builds the MCP endpoint from the environment: table names, for
// local runs PRICKLE_DYNAMODB_ENDPOINT, and on the front the tool functions
// (TOOL_FUNCTION_<TOOL>) that tool calls are handed to; PRICKLE_ALLOWED_ORIGINS
// names the browser origins it serves, and PUBLIC_BASE_URL, when set, turns
// on OAuth access tokens for PUBLIC_BASE_URL/mcp.
func NewMCP(log *slog.Logger, tools ...string) (*endpoint.Handler, error) {
	st := store.FromEnv()
	svc := team.New(st)
	// What a tool call changed (Task Routed, Result Returned, ...) goes out
	// on the bus; the front, which hands tool calls on, never publishes.
	svc.Events = bus.FromEnv()
	cfg := endpoint.Config{Service: svc, Tokens: st, Log: log, Tools: tools, AllowedOrigins: settings.AllowedOrigins(settings.OS)}
	if base := settings.PublicBaseURL(settings.OS); base != "" {
		// Prickle's own authorization server issues tokens for base/mcp.
		cfg.OAuth = oauthresource.New(base, st)
	}
	if len(tools) == 0 {
		var err error
		if cfg.ToolHandler, err = toolForwards(); err != nil {
			return nil, err
		}
	}
	return endpoint.New(cfg)
}

// toolForwards hands each tool call to the tool's function by Lambda Invoke,
// when the environment names the functions (as template.yaml does).
func toolForwards() (func(string) http.Handler, error) {
	names := map[string]string{}
	for _, t := range catalog.All() {
		if fn := os.Getenv("TOOL_FUNCTION_" + strings.ToUpper(t.Name)); fn != "" {
			names[t.Name] = fn
		}
	}
	if len(names) == 0 {
		return nil, nil
	}
	if len(names) != len(catalog.All()) {
		return nil, fmt.Errorf("TOOL_FUNCTION_* names %d of %d tools", len(names), len(catalog.All()))
	}
	client := lambda.NewFromConfig(awsenv.Config(), func(o *lambda.Options) {
		if ep := os.Getenv("LAMBDA_ENDPOINT"); ep != "" {
			o.BaseEndpoint = aws.String(ep)
		}
	})
	return func(tool string) http.Handler { return Forward{Lambda: client, Function: names[tool]} }, nil
}
