package endpoint

import (
	"encoding/json"
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"
)

// rpcPeek is the part of a JSON-RPC request the endpoint reads before MCP does.
type rpcPeek struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Meta      *peekMeta       `json:"_meta"`
	} `json:"params"`
}

// peekMeta is the one _meta field the endpoint reads: the protocol version,
// kept raw so that a malformed one reads as absent, as mcp.Meta reads it
// (decoding the whole mcp.Meta here cost about 50 allocations per call).
type peekMeta struct {
	ProtocolVersion json.RawMessage `json:"io.modelcontextprotocol/protocolVersion"`
}

// modern reports whether the request speaks MCP 2026-07-28 or later, where
// JSON-RPC errors also carry an HTTP status.
func (p rpcPeek) modern() bool {
	if p.Params.Meta == nil {
		return false
	}
	var version string
	_ = json.Unmarshal(p.Params.Meta.ProtocolVersion, &version)
	return mcp.IsModernProtocol(version)
}

// rpcStatus is the HTTP status of a JSON-RPC error: 200 for the handshake
// era, 400 for a bad request in 2026-07-28 (as mcp-go answers its own errors).
func (p rpcPeek) rpcStatus(code int) int {
	if !p.modern() {
		return http.StatusOK
	}
	if code == mcp.METHOD_NOT_FOUND {
		return http.StatusNotFound
	}
	return http.StatusBadRequest
}

// headersAgree reports whether the 2026-07-28 routing headers, when sent,
// match the body; when they do not, MCP itself refuses the request as the spec says.
func headersAgree(r *http.Request, p rpcPeek) bool {
	m, n := r.Header.Get("Mcp-Method"), r.Header.Get("Mcp-Name")
	if m == "" && n == "" {
		return true
	}
	return m == p.Method && n == p.Params.Name
}

func taskIDOf(args json.RawMessage) string {
	var a struct {
		TaskID string `json:"task_id"`
	}
	_ = json.Unmarshal(args, &a)
	return a.TaskID
}
