package server

import (
	"bytes"
	"context"
	"encoding/json"
)

// checkedKey is the context key of the arguments the endpoint has checked.
type checkedKey struct{}

type checkedArguments struct {
	tool string
	args json.RawMessage
}

// WithCheckedArguments records that a call's arguments passed the tool's
// input check before MCP read the request, so the server runs the tool on
// exactly those bytes without checking them again.
func WithCheckedArguments(ctx context.Context, tool string, args json.RawMessage) context.Context {
	return context.WithValue(ctx, checkedKey{}, checkedArguments{tool: tool, args: args})
}

// argumentsChecked reports whether args are the very bytes recorded as
// checked for tool; anything else is checked as usual.
func argumentsChecked(ctx context.Context, tool string, args json.RawMessage) bool {
	c, ok := ctx.Value(checkedKey{}).(checkedArguments)
	return ok && c.tool == tool && len(c.args) > 0 && bytes.Equal(c.args, args)
}
