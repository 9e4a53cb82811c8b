package main

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/useprickle/prickle/shared/mcp/catalog"
	"github.com/useprickle/prickle/shared/mcp/endpoint"
	"github.com/useprickle/prickle/shared/mcp/lambdamcp"
)

// Router serves the API in front. REST (the default) as the custom
// domain's routing rules do: Mcp-Name tool calls straight to the tool's
// function, everything else to mcp; each hop is a Lambda Invoke with the
// API Gateway proxy event. /slack/... goes to slack, /runner/... to runner;
// / and /a/... go to web. With Gateway "http", the HTTP API's routes (httpAPIRouter).
func (s *Stack) Router() (http.Handler, error) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /rie/counts", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(s.Counts())
	})
	switch s.opts.Gateway {
	case "http":
		s.httpAPIRouter(mux)
		return mux, nil
	case "", "rest":
	default:
		return nil, fmt.Errorf("gateway %q: want rest or http", s.opts.Gateway)
	}
	tools := map[string]http.Handler{}
	for _, t := range catalog.All() {
		tools[t.Name] = lambdamcp.Forward{Lambda: s, Function: t.Name}
	}
	mux.Handle("/mcp", endpoint.RouteByHeader(lambdamcp.Forward{Lambda: s, Function: "mcp"}, tools))
	if s.Functions["slack"] != nil {
		mux.Handle("/slack/", lambdamcp.Forward{Lambda: s, Function: "slack"})
	}
	if s.Functions["runner-api"] != nil {
		mux.Handle("/runner/", lambdamcp.Forward{Lambda: s, Function: "runner-api"})
	}
	if s.Functions["oauth"] != nil {
		for _, p := range []string{"/oauth/", "/.well-known/"} {
			mux.Handle(p, lambdamcp.Forward{Lambda: s, Function: "oauth"})
		}
	}
	if s.Functions["web"] != nil {
		mux.Handle("/", lambdamcp.Forward{Lambda: s, Function: "web"})
	}
	return mux, nil
}
