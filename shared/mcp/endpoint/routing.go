package endpoint

import (
	"fmt"
	"log/slog"
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/useprickle/prickle/shared/mcp/catalog"
)

// RouteByHeader does what the custom domain's routing rules do in the
// cloud: a POST whose Mcp-Method is tools/call and whose Mcp-Name names a
// tool goes to that tool's handler; everything else goes to the front. Like
// a gateway it reads headers only, never the body.
func RouteByHeader(front http.Handler, tools map[string]http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Header.Get("Mcp-Method") == string(mcp.MethodToolsCall) {
			if h, ok := tools[r.Header.Get("Mcp-Name")]; ok {
				h.ServeHTTP(w, r)
				return
			}
		}
		front.ServeHTTP(w, r)
	})
}

// InProcess builds what the cloud deploys, in one process: an endpoint per
// tool (as each tool's function serves it) and the front, which hands tool
// calls to them; requests are routed by header as the custom domain does.
func InProcess(cfg Config) (http.Handler, error) {
	tools := map[string]http.Handler{}
	for _, t := range catalog.All() {
		c := cfg
		c.Tools, c.ToolHandler = []string{t.Name}, nil
		c.Log = cfg.logger().With("function", t.Name)
		h, err := New(c)
		if err != nil {
			return nil, fmt.Errorf("endpoint of %s: %w", t.Name, err)
		}
		tools[t.Name] = h
	}
	front := cfg
	front.Tools = nil
	front.Log = cfg.logger().With("function", "mcp")
	front.ToolHandler = func(tool string) http.Handler { return tools[tool] }
	f, err := New(front)
	if err != nil {
		return nil, fmt.Errorf("front endpoint: %w", err)
	}
	return RouteByHeader(f, tools), nil
}

func (c Config) logger() *slog.Logger {
	if c.Log == nil {
		return slog.Default()
	}
	return c.Log
}
