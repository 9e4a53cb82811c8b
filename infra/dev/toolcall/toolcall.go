// Package toolcall reads the JSON-RPC answer to a tools/call as the
// operator tools that drive the MCP endpoint directly (infra/dev/load,
// infra/dev/measure/capacity) see it: a result, with its text or structured
// content, or a JSON-RPC error.
package toolcall

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Answer is a tools/call's JSON-RPC answer.
type Answer struct {
	Result *struct {
		IsError           bool            `json:"isError"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		Content           []struct {
			Text string `json:"text"`
		} `json:"content"`
	} `json:"result"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// Parse reads an answer's body.
func Parse(body []byte) (Answer, error) {
	var a Answer
	if err := json.Unmarshal(body, &a); err != nil {
		return Answer{}, fmt.Errorf("tools/call answer is not JSON-RPC: %w", err)
	}
	return a, nil
}

// Text is the text content of a result (a refusal's message), joined.
func (a Answer) Text() string {
	if a.Result == nil {
		return ""
	}
	var parts []string
	for _, c := range a.Result.Content {
		parts = append(parts, c.Text)
	}
	return strings.Join(parts, "")
}

// SetHeaders gives req what a 2026-07-28 client sends with a tools/call of
// tool: the agent's bearer token, the content types and the routing
// headers (Mcp-Method, Mcp-Name) that let the front send it straight to the
// tool's function.
func SetHeaders(req *http.Request, token, tool string) {
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", tool)
}
