// Package toolcall reads the JSON-RPC answer to a tools/call as the
// operator tools that drive the MCP endpoint directly (infra/load,
// infra/measure/capacity) see it: a result, with its text or structured
// content, or a JSON-RPC error.
package toolcall

import (
	"encoding/json"
	"fmt"
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
