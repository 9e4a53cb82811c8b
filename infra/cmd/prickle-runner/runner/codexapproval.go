package runner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"
)

// The tool names under which a Codex run asks its owner (request_step's
// tool_name): what runs, never the model's wording, so the same call asked
// again is the same step.
const (
	// CodexShellTool asks for a command: input {"command", "cwd"} as Codex
	// will run it (its shell wrapper included).
	CodexShellTool = "exec_command"
	// CodexPatchTool asks for a file change: input {"changes": [{"path",
	// "kind", "diff"}]}.
	CodexPatchTool = "apply_patch"
)

// PrickleServer is the MCP server name the codex template gives Prickle;
// its own tools are the run's way to report and are never asked about.
const PrickleServer = "prickle"

// maxReason bounds request_step's reason (its schema's maxLength).
const maxReason = 500

// The approval requests of `codex app-server` the runner answers.
const (
	codexCommandApproval = "item/commandExecution/requestApproval"
	codexFileApproval    = "item/fileChange/requestApproval"
	codexElicitation     = "mcpServer/elicitation/request"
)

// codexApproval is one Codex approval request as the owner is asked it.
type codexApproval struct {
	Ask StepAsk
	// Own is a call to one of Prickle's own tools: accepted without asking.
	Own bool
	// Unsupported, when set, says why the request is declined without asking.
	Unsupported string
	elicitation bool
}

// Reply is Codex's answer to the request: allowed or not.
func (a codexApproval) Reply(allow bool) any {
	switch {
	case a.elicitation && allow:
		return map[string]any{"action": "accept", "content": map[string]any{}}
	case a.elicitation:
		return map[string]any{"action": "decline", "content": nil}
	case allow:
		return map[string]string{"decision": "accept"}
	}
	return map[string]string{"decision": "decline"}
}

// codexItem is what the runner keeps of an item Codex has started: the
// command, the file changes or the MCP call an approval is about.
type codexItem struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Changes   []codexChange   `json:"changes"`
	Server    string          `json:"server"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
}

type codexChange struct {
	Path string `json:"path"`
	Kind struct {
		Type     string `json:"type"`
		MovePath string `json:"move_path"`
	} `json:"kind"`
	Diff string `json:"diff"`
}

// codexItems are the items Codex has started and not completed, by id.
type codexItems struct {
	mu    sync.Mutex
	items map[string]codexItem
	order []string
	asked map[string]bool
}

func newCodexItems() *codexItems {
	return &codexItems{items: map[string]codexItem{}, asked: map[string]bool{}}
}

// Started records an item/started item; Completed forgets it.
func (c *codexItems) Started(it codexItem) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.items[it.ID]; !ok {
		c.order = append(c.order, it.ID)
	}
	c.items[it.ID] = it
}

// Completed forgets an item Codex has completed.
func (c *codexItems) Completed(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.items, id)
	delete(c.asked, id)
	for i, o := range c.order {
		if o == id {
			c.order = append(c.order[:i], c.order[i+1:]...)
			break
		}
	}
}

func (c *codexItems) get(id string) (codexItem, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	it, ok := c.items[id]
	return it, ok
}

// mcpCall finds the oldest running call of server's tool not asked about
// yet (an elicitation names no item), preferring one with the same arguments.
func (c *codexItems) mcpCall(server, tool string, args json.RawMessage) (codexItem, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var found *codexItem
	for _, id := range c.order {
		it := c.items[id]
		if it.Type != "mcpToolCall" || it.Server != server || it.Tool != tool || c.asked[id] {
			continue
		}
		if sameJSON(it.Arguments, args) {
			found = &it
			break
		}
		if found == nil {
			found = &it
		}
	}
	if found == nil {
		return codexItem{}, false
	}
	c.asked[found.ID] = true
	return *found, true
}

func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	ca, _ := json.Marshal(x)
	cb, _ := json.Marshal(y)
	return string(ca) == string(cb)
}

// commandApproval is item/commandExecution/requestApproval's params.
type commandApproval struct {
	ItemID     string          `json:"itemId"`
	ApprovalID string          `json:"approvalId"`
	Command    string          `json:"command"`
	Cwd        string          `json:"cwd"`
	Reason     string          `json:"reason"`
	Kind       string          `json:"kind"`
	Network    json.RawMessage `json:"networkApprovalContext"`
}

// fileApproval is item/fileChange/requestApproval's params.
type fileApproval struct {
	ItemID    string `json:"itemId"`
	Reason    string `json:"reason"`
	GrantRoot string `json:"grantRoot"`
}

// elicitation is mcpServer/elicitation/request's params.
type elicitation struct {
	ServerName string `json:"serverName"`
	Message    string `json:"message"`
	Meta       struct {
		Kind   string          `json:"codex_approval_kind"`
		Tool   string          `json:"tool_name"`
		Params json.RawMessage `json:"tool_params"`
	} `json:"_meta"`
}

// mapApproval turns a Codex approval request into what the owner is asked:
// the tool name and input say exactly what would run; Codex's own words
// (a command's justification) go to reason, which is not part of a step's
// identity. It fails on a method it does not know or malformed params.
func mapApproval(method string, params json.RawMessage, items *codexItems) (codexApproval, error) {
	switch method {
	case codexCommandApproval:
		var p commandApproval
		if err := json.Unmarshal(params, &p); err != nil {
			return codexApproval{}, fmt.Errorf("%s: %w", method, err)
		}
		if p.Kind == "humanCommand" {
			return codexApproval{Unsupported: "a managed checkpoint for a person at the terminal"}, nil
		}
		in := map[string]any{"command": p.Command, "cwd": p.Cwd}
		if p.Kind != "" && p.Kind != "command" {
			in["kind"] = p.Kind
		}
		if len(p.Network) > 0 && string(p.Network) != "null" {
			in["network"] = p.Network
		}
		return codexApproval{Ask: newStepAsk(CodexShellTool, in, firstOf(p.ApprovalID, p.ItemID), p.Reason)}, nil
	case codexFileApproval:
		var p fileApproval
		if err := json.Unmarshal(params, &p); err != nil {
			return codexApproval{}, fmt.Errorf("%s: %w", method, err)
		}
		it, ok := items.get(p.ItemID)
		if !ok || it.Type != "fileChange" {
			return codexApproval{Unsupported: "no file change " + p.ItemID + " to show the owner"}, nil
		}
		changes := make([]map[string]string, 0, len(it.Changes))
		for _, c := range it.Changes {
			ch := map[string]string{"path": c.Path, "kind": c.Kind.Type, "diff": c.Diff}
			if c.Kind.MovePath != "" {
				ch["move_path"] = c.Kind.MovePath
			}
			changes = append(changes, ch)
		}
		in := map[string]any{"changes": changes}
		if p.GrantRoot != "" {
			in["grant_root"] = p.GrantRoot
		}
		return codexApproval{Ask: newStepAsk(CodexPatchTool, in, p.ItemID, p.Reason)}, nil
	case codexElicitation:
		var p elicitation
		if err := json.Unmarshal(params, &p); err != nil {
			return codexApproval{}, fmt.Errorf("%s: %w", method, err)
		}
		if p.Meta.Kind != "mcp_tool_call" {
			return codexApproval{elicitation: true, Unsupported: "a question from the MCP server " + p.ServerName + " that no one is there to answer"}, nil
		}
		if p.ServerName == PrickleServer {
			return codexApproval{elicitation: true, Own: true, Ask: StepAsk{ToolName: "mcp__" + p.ServerName + "__" + p.Meta.Tool}}, nil
		}
		var in any = map[string]any{}
		if len(p.Meta.Params) > 0 && string(p.Meta.Params) != "null" {
			var obj map[string]any
			if json.Unmarshal(p.Meta.Params, &obj) == nil {
				in = obj
			} else {
				in = map[string]any{"arguments": p.Meta.Params}
			}
		}
		id := ""
		if it, ok := items.mcpCall(p.ServerName, p.Meta.Tool, p.Meta.Params); ok {
			id = it.ID
		}
		return codexApproval{elicitation: true, Ask: newStepAsk("mcp__"+p.ServerName+"__"+p.Meta.Tool, in, id, p.Message)}, nil
	}
	return codexApproval{}, fmt.Errorf("%s is not an approval request", method)
}

func newStepAsk(tool string, input any, toolUseID, reason string) StepAsk {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // a command reads as written (">>", not "\u003e\u003e") where it is quoted
	_ = enc.Encode(input)    // maps of strings and raw JSON always encode
	return StepAsk{ToolName: tool, Input: bytes.TrimSpace(b.Bytes()), ToolUseID: clip(toolUseID, 200), Reason: clip(reason, maxReason)}
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
