package runner

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestMapApproval(t *testing.T) {
	items := newCodexItems()
	items.Started(codexItem{Type: "fileChange", ID: "call_patch", Changes: []codexChange{
		{Path: "/w/a.txt", Diff: "hello\n", Kind: struct {
			Type     string `json:"type"`
			MovePath string `json:"move_path"`
		}{Type: "add"}},
		{Path: "/w/b.txt", Diff: "@@ -1 +1 @@\n-x\n+y\n", Kind: struct {
			Type     string `json:"type"`
			MovePath string `json:"move_path"`
		}{Type: "update", MovePath: "/w/c.txt"}},
	}})
	items.Started(codexItem{Type: "mcpToolCall", ID: "call_gh_1", Server: "github", Tool: "create_pr", Arguments: json.RawMessage(`{"title":"a"}`)})
	items.Started(codexItem{Type: "mcpToolCall", ID: "call_gh_2", Server: "github", Tool: "create_pr", Arguments: json.RawMessage(`{"title":"b"}`)})
	elicit := func(server, tool, params string) string {
		return `{"threadId":"t","serverName":"` + server + `","mode":"form","message":"Allow the ` + server + ` MCP server to run tool \"` + tool + `\"?",` +
			`"requestedSchema":{"type":"object","properties":{}},"_meta":{"codex_approval_kind":"mcp_tool_call","tool_name":"` + tool + `","tool_params":` + params + `}}`
	}
	tests := []struct {
		name, method, params string
		want                 StepAsk
		own                  bool
		unsupported          string
		elicitation          bool
	}{
		{name: "a command: what runs and where; Codex's justification is the reason", method: codexCommandApproval,
			params: `{"threadId":"t","turnId":"u","itemId":"call_1","startedAtMs":1,"command":"/bin/bash -lc 'echo ran >> side.txt'","cwd":"/w","reason":"Append the line.","commandActions":[],"proposedExecpolicyAmendment":["/bin/bash"]}`,
			want:   StepAsk{ToolName: "exec_command", Input: json.RawMessage(`{"command":"/bin/bash -lc 'echo ran >> side.txt'","cwd":"/w"}`), ToolUseID: "call_1", Reason: "Append the line."}},
		{name: "the same command worded otherwise, another call id: the same input", method: codexCommandApproval,
			params: `{"itemId":"call_2","command":"/bin/bash -lc 'echo ran >> side.txt'","cwd":"/w","kind":"command","startedAtMs":9}`,
			want:   StepAsk{ToolName: "exec_command", Input: json.RawMessage(`{"command":"/bin/bash -lc 'echo ran >> side.txt'","cwd":"/w"}`), ToolUseID: "call_2"}},
		{name: "input to a running terminal and a network host are part of what runs", method: codexCommandApproval,
			params: `{"itemId":"call_3","approvalId":"ap_1","command":"ls","cwd":"/w","kind":"writeStdin","networkApprovalContext":{"host":"example.com","protocol":"https"}}`,
			want:   StepAsk{ToolName: "exec_command", Input: json.RawMessage(`{"command":"ls","cwd":"/w","kind":"writeStdin","network":{"host":"example.com","protocol":"https"}}`), ToolUseID: "ap_1"}},
		{name: "a managed human checkpoint is not for the owner", method: codexCommandApproval,
			params: `{"itemId":"call_4","kind":"humanCommand"}`, unsupported: "managed checkpoint"},
		{name: "a file change: its diff, from the item Codex started", method: codexFileApproval,
			params: `{"threadId":"t","turnId":"u","itemId":"call_patch","startedAtMs":1,"reason":null,"grantRoot":null}`,
			want: StepAsk{ToolName: "apply_patch", ToolUseID: "call_patch", Input: json.RawMessage(`{"changes":[{"diff":"hello\n","kind":"add","path":"/w/a.txt"},` +
				`{"diff":"@@ -1 +1 @@\n-x\n+y\n","kind":"update","move_path":"/w/c.txt","path":"/w/b.txt"}]}`)}},
		{name: "a file change asking for a writable root", method: codexFileApproval,
			params: `{"itemId":"call_patch","grantRoot":"/etc","reason":"needs /etc"}`,
			want: StepAsk{ToolName: "apply_patch", ToolUseID: "call_patch", Reason: "needs /etc", Input: json.RawMessage(`{"changes":[{"diff":"hello\n","kind":"add","path":"/w/a.txt"},` +
				`{"diff":"@@ -1 +1 @@\n-x\n+y\n","kind":"update","move_path":"/w/c.txt","path":"/w/b.txt"}],"grant_root":"/etc"}`)}},
		{name: "a file change Codex never showed is not asked", method: codexFileApproval, params: `{"itemId":"call_unknown"}`, unsupported: "no file change call_unknown"},
		{name: "another MCP server's tool: its arguments, the running call's id", method: codexElicitation, elicitation: true,
			params: elicit("github", "create_pr", `{"title":"b"}`),
			want:   StepAsk{ToolName: "mcp__github__create_pr", Input: json.RawMessage(`{"title":"b"}`), ToolUseID: "call_gh_2", Reason: `Allow the github MCP server to run tool "create_pr"?`}},
		{name: "Prickle's own tools are not asked", method: codexElicitation, elicitation: true, own: true,
			params: elicit("prickle", "decline_task", `{"task_id":"tsk_1","reason":"no"}`)},
		{name: "a question from an MCP server is declined", method: codexElicitation, elicitation: true,
			params: `{"serverName":"github","mode":"form","message":"Your name?","requestedSchema":{}}`, unsupported: "no one is there to answer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := mapApproval(tt.method, json.RawMessage(tt.params), items)
			if err != nil {
				t.Fatal(err)
			}
			if a.Own != tt.own || a.elicitation != tt.elicitation || (tt.unsupported == "") != (a.Unsupported == "") || !strings.Contains(a.Unsupported, tt.unsupported) {
				t.Fatalf("own %v elicitation %v unsupported %q", a.Own, a.elicitation, a.Unsupported)
			}
			if tt.own || tt.unsupported != "" {
				return
			}
			if a.Ask.ToolName != tt.want.ToolName || a.Ask.ToolUseID != tt.want.ToolUseID || a.Ask.Reason != tt.want.Reason || !sameJSON(a.Ask.Input, tt.want.Input) {
				t.Errorf("ask %s %s id %q reason %q\nwant %s %s id %q reason %q", a.Ask.ToolName, a.Ask.Input, a.Ask.ToolUseID, a.Ask.Reason,
					tt.want.ToolName, tt.want.Input, tt.want.ToolUseID, tt.want.Reason)
			}
			if strings.Contains(string(a.Ask.Input), `\u003e`) {
				t.Errorf("input %s escapes what it quotes", a.Ask.Input)
			}
		})
	}
	if _, err := mapApproval("item/tool/requestUserInput", json.RawMessage(`{}`), items); err == nil {
		t.Error("a request that is no approval maps")
	}
	if _, err := mapApproval(codexCommandApproval, json.RawMessage(`[`), items); err == nil {
		t.Error("malformed params map")
	}
}

func TestCodexApprovalReply(t *testing.T) {
	for _, tc := range []struct {
		a     codexApproval
		allow bool
		want  string
	}{
		{codexApproval{}, true, `{"decision":"accept"}`},
		{codexApproval{}, false, `{"decision":"decline"}`},
		{codexApproval{elicitation: true}, true, `{"action":"accept","content":{}}`},
		{codexApproval{elicitation: true}, false, `{"action":"decline","content":null}`},
	} {
		b, _ := json.Marshal(tc.a.Reply(tc.allow))
		if string(b) != tc.want {
			t.Errorf("reply(%v) = %s, want %s", tc.allow, b, tc.want)
		}
	}
}

func TestCodexItemsMatchAnMCPCallOnce(t *testing.T) {
	items := newCodexItems()
	items.Started(codexItem{Type: "mcpToolCall", ID: "a", Server: "s", Tool: "t", Arguments: json.RawMessage(`{"x":1}`)})
	items.Started(codexItem{Type: "mcpToolCall", ID: "b", Server: "s", Tool: "t", Arguments: json.RawMessage(`{"x":2}`)})
	for _, want := range []string{"b", "a"} { // the same arguments first, then the oldest not asked yet
		it, ok := items.mcpCall("s", "t", json.RawMessage(`{ "x": 2 }`))
		if !ok || it.ID != want {
			t.Errorf("matched %q %v, want %q", it.ID, ok, want)
		}
	}
	if _, ok := items.mcpCall("s", "t", nil); ok {
		t.Error("a call already asked about matched again")
	}
	items.Completed("a")
	if _, ok := items.get("a"); ok {
		t.Error("a completed item is kept")
	}
}
