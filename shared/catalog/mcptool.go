package catalog

import "github.com/mark3labs/mcp-go/mcp"

// MCPTool is the tool as tools/list shows it: seed schemas byte for byte,
// annotations from the catalog.
func (t *Tool) MCPTool() mcp.Tool {
	m := mcp.NewToolWithRawSchema(t.Name, t.Description, t.Input)
	m.RawOutputSchema = t.Output
	readOnly, destructive, idempotent, openWorld := !t.Writes, t.Destructive, t.Idempotent, false
	m.Annotations = mcp.ToolAnnotation{
		Title: t.Title, ReadOnlyHint: &readOnly, DestructiveHint: &destructive,
		IdempotentHint: &idempotent, OpenWorldHint: &openWorld,
	}
	return m
}
