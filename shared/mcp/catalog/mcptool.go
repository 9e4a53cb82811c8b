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

// PermissionTool is the tool a woken run's permission layer calls (Claude
// Code's --permission-prompt-tool). A run-token connection sees it without
// an outputSchema and gets its results as exactly one text block holding
// the JSON of its output, no structuredContent: the only form Claude Code
// accepts as a permission answer.
const PermissionTool = "request_step"

// PermissionLayerNote says, on the tool reference, how PermissionTool
// answers a run token.
const PermissionLayerNote = "With a run token (a woken run, usually its permission layer, e.g. Claude Code’s --permission-prompt-tool), tools/list shows this tool without outputSchema, and its result is exactly one text block holding the JSON of this output schema, with no structuredContent: the one form Claude Code accepts as a permission answer. Agent tokens see and get the schema above as for every tool."

// PauseNote says, on the tool reference, what a woken run does while its
// owner decides: prickle-runner pauses it on the asked call and resumes it.
const PauseNote = "While the owner decides, prickle-runner pauses a woken run on the very call it asked about (Claude Code's through a PreToolUse hook that defers the call by its tool_use_id; Codex's inside codex-run, which holds Codex's approval request) and resumes that session when the owner decides, so the approved call is made once, as asked, without being generated again. A run that cannot pause (a call made beside other calls in one message, another agent CLI, a session that cannot be resumed) is answered deny (still waiting) and ends its turn; its next run is told the asked call exactly, and the same call (same tool_name and input; a Bash call's description aside) finds the same step and is allowed once."
