package lambdahttp

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/useprickle/prickle/shared/endpoint"
	"github.com/useprickle/prickle/shared/store"
	"github.com/useprickle/prickle/shared/team"
)

// StartMCP serves the MCP endpoint for the given tools (all of them for the
// mcp front) with the store its environment names; it never returns.
func StartMCP(tools ...string) {
	log := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	h, err := NewMCP(context.Background(), log, tools...)
	if err != nil {
		log.Error("start", "error", err.Error())
		os.Exit(1)
	}
	Start(h)
}

// NewMCP builds the MCP endpoint from the environment: table names and,
// for local runs, PRICKLE_DYNAMODB_ENDPOINT.
func NewMCP(ctx context.Context, log *slog.Logger, tools ...string) (*endpoint.Handler, error) {
	client, err := store.NewClient(ctx, os.Getenv("PRICKLE_DYNAMODB_ENDPOINT"))
	if err != nil {
		return nil, fmt.Errorf("dynamodb client: %w", err)
	}
	st := store.New(client, store.TablesFromEnv())
	return endpoint.New(endpoint.Config{Service: team.New(st), Tokens: st, Log: log, Tools: tools})
}
