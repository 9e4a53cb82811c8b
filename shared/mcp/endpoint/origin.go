package endpoint

import (
	"net/http"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
)

// forbiddenOrigin is /mcp's Origin check: a browser request whose Origin is
// not one of the configured origins (Config.AllowedOrigins) gets 403 before
// its token is read. Requests without Origin (SDK clients, agent CLIs)
// pass. (The local stack's server answers loopback Hosts only; a deployed
// endpoint is reached through its API Gateway domain.) On true it has
// answered.
func (h *Handler) forbiddenOrigin(w http.ResponseWriter, r *http.Request, line *requestLog) bool {
	origin := r.Header.Get("Origin")
	if origin == "" || h.originAllowed(origin) {
		return false
	}
	line.outcome = "forbidden_origin"
	writeJSON(w, http.StatusForbidden, rpcError(nil, mcp.INVALID_REQUEST, "forbidden: requests from origin "+origin+" are not allowed"))
	return true
}

// originAllowed reports whether origin is one of the configured origins;
// "null" (sandboxed frames, file pages) never is.
func (h *Handler) originAllowed(origin string) bool {
	origin = strings.TrimSuffix(origin, "/")
	for _, o := range h.cfg.AllowedOrigins {
		if origin != "null" && strings.EqualFold(origin, strings.TrimSuffix(o, "/")) {
			return true
		}
	}
	return false
}
