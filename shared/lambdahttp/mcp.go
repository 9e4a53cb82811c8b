package lambdahttp

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/useprickle/prickle/shared/catalog"
	"github.com/useprickle/prickle/shared/endpoint"
	"github.com/useprickle/prickle/shared/store"
	"github.com/useprickle/prickle/shared/team"
)

// StartMCP serves the MCP endpoint for the given tools (all of them for the
// mcp front) with the store its environment names; it never returns.
func StartMCP(tools ...string) {
	log := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	slog.SetDefault(log)
	h, err := NewMCP(context.Background(), log, tools...)
	if err != nil {
		log.Error("start", "error", err.Error())
		os.Exit(1)
	}
	Start(h)
}

// NewMCP builds the MCP endpoint from the environment: table names, for
// local runs PRICKLE_DYNAMODB_ENDPOINT, and on the front the tool functions
// (TOOL_FUNCTION_<TOOL>) that tool calls are handed to.
func NewMCP(ctx context.Context, log *slog.Logger, tools ...string) (*endpoint.Handler, error) {
	client, err := store.NewClient(ctx, os.Getenv("PRICKLE_DYNAMODB_ENDPOINT"))
	if err != nil {
		return nil, fmt.Errorf("dynamodb client: %w", err)
	}
	st := store.New(client, store.TablesFromEnv())
	cfg := endpoint.Config{Service: team.New(st), Tokens: st, Log: log, Tools: tools}
	if len(tools) == 0 {
		if cfg.Route, err = toolRoutes(ctx); err != nil {
			return nil, err
		}
	}
	return endpoint.New(cfg)
}

// toolRoutes hands each tool call to the tool's function by Lambda Invoke,
// when the environment names the functions (as template.yaml does).
func toolRoutes(ctx context.Context) (func(string) http.Handler, error) {
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
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("load AWS config: %w", err)
	}
	client := lambda.NewFromConfig(cfg, func(o *lambda.Options) {
		if ep := os.Getenv("LAMBDA_ENDPOINT"); ep != "" {
			o.BaseEndpoint = aws.String(ep)
		}
	})
	return func(tool string) http.Handler { return Forward{Lambda: client, Function: names[tool]} }, nil
}
