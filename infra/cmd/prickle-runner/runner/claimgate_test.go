package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/domain/pulse"
)

func TestEditedFileOfEachCLI(t *testing.T) {
	tests := []struct {
		cli, tool, input, want string
	}{
		{TemplateQwen, "write_file", `{"file_path":"/w/src/a.ts","content":"x"}`, "/w/src/a.ts"},
		{TemplateQwen, "edit", `{"old_string":"a","file_path":"src/a.ts","new_string":"b"}`, "src/a.ts"},
		{TemplateQwen, "replace", `{"file_path":"src/a.ts"}`, ""},
		{TemplateQwen, "run_shell_command", `{"command":"echo x > src/a.ts"}`, ""},
		{TemplateGemini, "write_file", `{"file_path":"src/a.ts","content":"x"}`, "src/a.ts"},
		{TemplateGemini, "replace", `{"instruction":"fix","file_path":"src/a.ts","old_string":"a","new_string":"b"}`, "src/a.ts"},
		{TemplateGemini, "edit", `{"file_path":"src/a.ts"}`, ""},
		{TemplateCopilot, "edit", `{"path":"/w/src/a.ts","old_str":"a","new_str":"b"}`, "/w/src/a.ts"},
		{TemplateCopilot, "create", `{"file_text":"x","path":"src/new.ts"}`, "src/new.ts"},
		{TemplateCopilot, "str_replace_editor", `{"command":"view","path":"src/a.ts"}`, ""},
		{TemplateCopilot, "str_replace_editor", `{"command":"insert","path":"src/a.ts","insert_line":1,"new_str":"x"}`, "src/a.ts"},
		{TemplateCopilot, "view", `{"path":"src/a.ts"}`, ""},
		{TemplateCopilot, "edit", `not json`, ""},
		{TemplateOpencode, "edit", `{"oldString":"a","filePath":"/w/src/a.ts","newString":"b"}`, "/w/src/a.ts"},
		{TemplateOpencode, "write", `{"content":"x","filePath":"src/new.ts"}`, "src/new.ts"},
		{TemplateOpencode, "apply_patch", "{\"patchText\":\"*** Begin Patch\\n*** Update File: src/a.ts\\n*** Move to: src/b.ts\\n@@\\n-a\\n+b\\n*** Add File: /w/src/c.ts\\n+c\\n*** Delete File: src/d.ts\\n*** End Patch\"}",
			"src/a.ts src/b.ts /w/src/c.ts src/d.ts"},
		{TemplateOpencode, "apply_patch", "{\"patchText\":\"*** Begin Patch\\r\\n*** Add File: src/e.ts\\r\\n+ *** Add File: src/not-a-file.ts\\r\\n*** End Patch\"}", "src/e.ts"},
		{TemplateOpencode, "apply_patch", `{"patchText":"no patch"}`, ""},
		{TemplateOpencode, "read", `{"filePath":"src/a.ts"}`, ""},
		{TemplateOpencode, "bash", `{"command":"echo x > src/a.ts","description":"write"}`, ""},
		{TemplateOpencode, "edit", `{"path":"src/a.ts"}`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.cli+"/"+tc.tool, func(t *testing.T) {
			cc, ok := agentCLIs[tc.cli].(claimingCLI)
			if !ok {
				t.Fatalf("%s claims no edits", tc.cli)
			}
			if got := strings.Join(editedFiles(cc, tc.tool, json.RawMessage(tc.input)), " "); got != tc.want {
				t.Fatalf("edited files %q, want %q", got, tc.want)
			}
			if got, first := cc.editedFile(tc.tool, json.RawMessage(tc.input)), strings.Split(tc.want, " ")[0]; got != first {
				t.Fatalf("editedFile %q, want %q", got, first)
			}
		})
	}
}

// gateEdit is a CLI's hook input of an edit of file.
func gateEdit(cli, file string) string {
	switch cli {
	case TemplateQwen:
		b, _ := json.Marshal(map[string]any{"hook_event_name": "PreToolUse", "tool_name": "write_file", "tool_call_id": "call_9",
			"tool_input": map[string]string{"file_path": file, "content": "x"}})
		return string(b)
	case TemplateGemini:
		b, _ := json.Marshal(map[string]any{"hook_event_name": "BeforeTool", "tool_name": "replace",
			"tool_input": map[string]string{"file_path": file, "old_string": "a", "new_string": "b"}})
		return string(b)
	case TemplateOpencode:
		b, _ := json.Marshal(map[string]any{"tool": "edit", "sessionID": "ses_1", "callID": "call_9",
			"args": map[string]string{"filePath": file, "oldString": "a", "newString": "b"}})
		return string(b)
	}
	b, _ := json.Marshal(map[string]any{"toolName": "edit", "toolArgs": map[string]string{"path": file, "old_str": "a", "new_str": "b"}})
	return string(b)
}

var gateEditTools = map[string]string{TemplateQwen: "write_file", TemplateGemini: "replace", TemplateCopilot: "edit", TemplateOpencode: "edit"}

func TestGateClaimsEdits(t *testing.T) {
	since := time.Now().Add(-5 * time.Minute)
	bob := pulse.Entry{AgentID: "bob/coder", Project: "website-v2", TaskID: str("tsk_theirs"), Files: []string{"src/held.ts"}, UpdatedAt: since}
	approved := StepAnswer{Behavior: "allow", Status: "approved", StepID: "stp_1"}
	consumed := StepAnswer{Behavior: "allow", Status: "consumed", StepID: "stp_1"}
	tests := []struct {
		name       string
		guard      string
		allowList  bool
		file       string
		wantAllow  bool
		wantAsked  bool
		wantReason string // in the deny's reason, or the owner's
		wantNote   string
		wantClaim  bool
	}{
		{name: "deny: a teammate's file is stopped before it is edited", guard: pulse.GuardDeny, allowList: true, file: "src/held.ts",
			wantReason: "bob/coder holds src/held.ts for task tsk_theirs"},
		{name: "a free file, allow-listed, goes ahead and is claimed", guard: pulse.GuardDeny, allowList: true, file: "src/free.ts",
			wantAllow: true, wantClaim: true},
		{name: "a free file asked of the owner is claimed once allowed", guard: pulse.GuardDeny, file: "src/free.ts",
			wantAllow: true, wantAsked: true, wantClaim: true},
		{name: "ask: a teammate's file is asked of the owner, allow-listed or not", guard: pulse.GuardAsk, allowList: true, file: "src/held.ts",
			wantAllow: true, wantAsked: true, wantReason: "bob/coder holds src/held.ts"},
		{name: "warn: it goes ahead, the model told who holds it", guard: pulse.GuardWarn, allowList: true, file: "src/held.ts",
			wantAllow: true, wantNote: "bob/coder holds src/held.ts"},
		{name: "outside the repository: neither guarded nor claimed", guard: pulse.GuardDeny, allowList: true, file: "/etc/hosts",
			wantAllow: true},
	}
	for _, cli := range []string{TemplateQwen, TemplateGemini, TemplateCopilot, TemplateOpencode} {
		for _, tc := range tests {
			t.Run(cli+"/"+tc.name, func(t *testing.T) {
				r := newClaimRig(t, tc.guard)
				r.room.entries = []pulse.Entry{bob}
				env := r.env
				if tc.allowList {
					env.Allowed = []string{gateEditTools[cli]}
				}
				file := tc.file
				if !strings.HasPrefix(file, "/") {
					file = r.root + "/" + file
				}
				steps := &scriptedSteps{look: []StepAnswer{approved}, take: consumed}
				var out bytes.Buffer
				code := runGateWith(context.Background(), agentCLIs[cli], strings.NewReader(gateEdit(cli, file)), &out, env, steps,
					gateClaims{ce: r.ce, room: r.room}, "", 5*time.Second, nil)
				if code != 0 {
					t.Fatalf("exit %d", code)
				}
				d := decode(t, cli, out.Bytes())
				if d.allow != tc.wantAllow {
					t.Fatalf("allow %v, want %v: %s", d.allow, tc.wantAllow, out.String())
				}
				if (len(steps.asked) > 0) != tc.wantAsked {
					t.Fatalf("asked %v, want asked %v", steps.asked, tc.wantAsked)
				}
				if tc.wantReason != "" {
					said := d.reason
					if tc.wantAsked {
						said = steps.asked[0].Reason
					}
					if !strings.Contains(said, tc.wantReason) {
						t.Fatalf("reason %q does not say %q", said, tc.wantReason)
					}
				}
				if tc.wantNote != "" && !strings.Contains(out.String(), tc.wantNote) {
					t.Fatalf("answer %s does not tell the model %q", out.String(), tc.wantNote)
				}
				own := r.room.own()
				claimed := own != nil && slices.Contains(own.Files, strings.TrimPrefix(tc.file, "/"))
				if claimed != tc.wantClaim {
					t.Fatalf("claimed %v, want %v (pulse %+v)", claimed, tc.wantClaim, own)
				}
				if own != nil && slices.Contains(own.Files, "src/held.ts") {
					t.Fatal("a teammate's file was claimed")
				}
			})
		}
	}
}

// afterInputs are the post-tool hook inputs of each CLI after a shell call.
var afterInputs = map[string]string{
	TemplateQwen: `{"hook_event_name":"PostToolUse","tool_name":"run_shell_command","tool_input":{"command":"echo x > src/a.ts"},
		"tool_response":{"llmContent":""},"tool_use_id":"toolu_1","tool_call_id":"call_1"}`,
	TemplateGemini: `{"hook_event_name":"AfterTool","tool_name":"run_shell_command","tool_input":{"command":"echo x > src/a.ts"},
		"tool_response":{"llmContent":""}}`,
	TemplateCopilot:  `{"sessionId":"s1","toolName":"bash","toolArgs":{"command":"echo x > src/a.ts"},"toolResult":{"resultType":"success"}}`,
	TemplateOpencode: `{"tool":"bash","sessionID":"ses_1","callID":"call_1","args":{"description":"write a.ts","command":"echo x > src/a.ts"}}`,
}

func TestAfterShellCallClaims(t *testing.T) {
	for _, cli := range []string{TemplateQwen, TemplateGemini, TemplateCopilot, TemplateOpencode} {
		t.Run(cli, func(t *testing.T) {
			r := newClaimRig(t, pulse.GuardDeny)
			r.room.entries = []pulse.Entry{{AgentID: "bob/coder", Project: "website-v2", Files: []string{"src/held.ts"}, UpdatedAt: time.Now()}}
			markTree(context.Background(), r.session, r.root)
			write(t, r.root, "src/a.ts", "x\n")
			write(t, r.root, "src/held.ts", "x\n")
			note := afterCall(context.Background(), agentCLIs[cli], strings.NewReader(afterInputs[cli]), r.env, r.ce, r.room)
			if own := r.room.own(); own == nil || !slices.Contains(own.Files, "src/a.ts") || slices.Contains(own.Files, "src/held.ts") {
				t.Fatalf("pulse %+v: want src/a.ts claimed, src/held.ts not", own)
			}
			if !strings.Contains(note, "src/held.ts") {
				t.Fatalf("note %q does not name the held file", note)
			}
			ans := agentCLIs[cli].(claimingCLI).afterAnswer(note)
			var got struct {
				Context string `json:"additionalContext"`
				Note    string `json:"note"`
				H       struct {
					Context string `json:"additionalContext"`
				} `json:"hookSpecificOutput"`
			}
			if err := json.Unmarshal(ans, &got); err != nil || (got.Context+got.Note+got.H.Context) != note {
				t.Fatalf("answer %s does not carry the note: %v", ans, err)
			}
			// Another tool's post-tool input claims nothing.
			other := strings.ReplaceAll(strings.ReplaceAll(afterInputs[cli], "run_shell_command", "read_file"), `"bash"`, `"view"`)
			write(t, r.root, "src/c.ts", "x\n")
			if n := afterCall(context.Background(), agentCLIs[cli], strings.NewReader(other), r.env, r.ce, r.room); n != "" || slices.Contains(r.room.own().Files, "src/c.ts") {
				t.Fatalf("after a read, claimed: note %q, pulse %v", n, r.room.own().Files)
			}
		})
	}
}

// An apply_patch call of opencode names several files: a teammate's among
// them stops it (deny) or is named to the model (warn), and only the free
// ones are claimed once it goes ahead.
func TestGateClaimsEveryFileOfAPatch(t *testing.T) {
	bob := pulse.Entry{AgentID: "bob/coder", Project: "website-v2", TaskID: str("tsk_theirs"), Files: []string{"src/held.ts"}, UpdatedAt: time.Now().Add(-time.Minute)}
	tests := []struct {
		name, guard string
		files       []string
		wantAllow   bool
		wantSaid    string // in the deny's reason or the note
		wantClaimed []string
	}{
		{name: "deny: a held file anywhere in the patch stops it", guard: pulse.GuardDeny, files: []string{"src/free.ts", "src/held.ts"},
			wantSaid: "bob/coder holds src/held.ts for task tsk_theirs"},
		{name: "every free file is claimed", guard: pulse.GuardDeny, files: []string{"src/one.ts", "src/two.ts", "/etc/hosts"},
			wantAllow: true, wantClaimed: []string{"src/one.ts", "src/two.ts"}},
		{name: "warn: it goes ahead, the held file stays the holder's, the free one is claimed", guard: pulse.GuardWarn,
			files: []string{"src/held.ts", "src/free.ts"}, wantAllow: true, wantSaid: "bob/coder holds src/held.ts", wantClaimed: []string{"src/free.ts"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newClaimRig(t, tc.guard)
			r.room.entries = []pulse.Entry{bob}
			env := r.env
			env.Allowed = []string{"apply_patch"}
			patch := "*** Begin Patch\n"
			for i, f := range tc.files {
				if !strings.HasPrefix(f, "/") {
					f = r.root + "/" + f
				}
				head := []string{"*** Add File: ", "*** Update File: "}[i%2]
				patch += head + f + "\n+x\n"
			}
			in, _ := json.Marshal(map[string]any{"tool": "apply_patch", "callID": "call_3", "args": map[string]string{"patchText": patch + "*** End Patch"}})
			var out bytes.Buffer
			if code := runGateWith(context.Background(), agentCLIs[TemplateOpencode], bytes.NewReader(in), &out, env, &scriptedSteps{},
				gateClaims{ce: r.ce, room: r.room}, "", 5*time.Second, nil); code != 0 {
				t.Fatalf("exit %d", code)
			}
			var a struct{ Decision, Reason, Note string }
			if err := json.Unmarshal(out.Bytes(), &a); err != nil {
				t.Fatal(err)
			}
			if (a.Decision == "allow") != tc.wantAllow || !strings.Contains(a.Reason+a.Note, tc.wantSaid) {
				t.Fatalf("answer %s, want allow %v saying %q", out.String(), tc.wantAllow, tc.wantSaid)
			}
			var claimed []string
			if own := r.room.own(); own != nil {
				claimed = own.Files
			}
			if !slices.Equal(claimed, tc.wantClaimed) {
				t.Fatalf("claimed %v, want %v", claimed, tc.wantClaimed)
			}
		})
	}
}
