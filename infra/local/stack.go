package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"

	"github.com/useprickle/prickle/infra/stack"
	"github.com/useprickle/prickle/shared/admin"
	"github.com/useprickle/prickle/shared/endpoint"
	"github.com/useprickle/prickle/shared/store"
	"github.com/useprickle/prickle/shared/team"
)

// localParams are the template parameters of the local stack.
var localParams = map[string]string{"Stage": "local"}

// environment is the prepared stack: its store, tables and demo tokens.
type environment struct {
	store  *store.Store
	tables map[string]string
	tokens map[string]string
}

// prepare creates the tables template.yaml declares, seeds an empty store,
// and settles the demo tokens.
func prepare(ctx context.Context, cfg config, endpointURL string) (*environment, error) {
	tmpl, err := stack.LoadTemplate(cfg.template)
	if err != nil {
		return nil, err
	}
	specs, err := tmpl.Tables(localParams)
	if err != nil {
		return nil, err
	}
	names, err := tmpl.TableNames(localParams)
	if err != nil {
		return nil, err
	}
	client, err := store.NewClient(ctx, endpointURL)
	if err != nil {
		return nil, err
	}
	if err := stack.CreateTables(ctx, client, specs); err != nil {
		return nil, fmt.Errorf("create tables from %s: %w", cfg.template, err)
	}
	st := store.New(client, store.Tables{
		Tasks: names["TasksTable"], Steps: names["StepsTable"], Pulse: names["PulseTable"], Directory: names["DirectoryTable"],
	})
	adm := admin.New(st)
	if !seededAlready(ctx, st) {
		if err := seed(ctx, adm, st); err != nil {
			return nil, err
		}
		fmt.Println("seeded     website-v2 (alice, bob) and mobile-app (carol)")
	}
	prev, err := readState(filepath.Join(cfg.stateDir, "local.json"))
	if err != nil {
		return nil, err
	}
	tokens, err := demoTokens(ctx, adm, st, prev.Tokens)
	if err != nil {
		return nil, err
	}
	return &environment{store: st, tables: names, tokens: tokens}, nil
}

// handler serves /mcp as the cloud does: calls naming a tool in Mcp-Name go
// to that tool's own endpoint, everything else to the front, which hands
// older clients' tool calls to the same per-tool endpoints.
func (e *environment) handler(log *slog.Logger) (http.Handler, error) {
	mcp, err := endpoint.InProcess(endpoint.Config{Service: team.New(e.store), Tokens: e.store, Log: log})
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "Prickle local stack. MCP endpoint: /mcp (bearer token from .prickle/local.json).")
	})
	return mux, nil
}
