package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeAsker answers request_step as Prickle would, recording what it was asked.
type fakeAsker struct {
	answer StepAnswer
	err    error
	asked  []string // token tool tool_use_id input
}

func (f *fakeAsker) RequestStep(_ context.Context, token string, a StepAsk) (StepAnswer, error) {
	f.asked = append(f.asked, token+" "+a.ToolName+" "+a.ToolUseID+" "+string(a.Input))
	return f.answer, f.err
}

// transcript writes a Claude Code transcript whose last model message holds the given tool calls
// (each content block a line of its own, as Claude Code writes them).
func transcript(t *testing.T, ids ...string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(`{"type":"user","message":{"role":"user","content":"do it"}}` + "\n")
	b.WriteString(`{"type":"assistant","message":{"id":"msg_old","content":[{"type":"tool_use","id":"toolu_old","name":"Read","input":{}}]}}` + "\n")
	b.WriteString(`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_old"}]}}` + "\n")
	for _, id := range ids {
		b.WriteString(`{"type":"assistant","message":{"id":"msg_now","content":[{"type":"tool_use","id":"` + id + `","name":"Bash","input":{"command":"x"}}]}}` + "\n")
	}
	path := filepath.Join(t.TempDir(), "session.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestHook(t *testing.T) {
	pending := StepAnswer{Behavior: "deny", Status: "pending", StepID: "stp_1", Message: "still waiting for your owner"}
	allowed := StepAnswer{Behavior: "allow", Status: "consumed", StepID: "stp_1", Message: "allowed", UpdatedInput: json.RawMessage(`{"command":"git push origin main"}`)}
	refused := StepAnswer{Behavior: "deny", Status: "refused", StepID: "stp_1", Message: `refused by your owner: "not today"`}
	one, two := transcript(t, "toolu_1"), transcript(t, "toolu_1", "toolu_2")
	input := func(tool, id, tr string) string {
		return `{"hook_event_name":"PreToolUse","tool_name":"` + tool + `","tool_input":{"command":"git push origin main","description":"Publish"},"tool_use_id":"` + id + `","transcript_path":"` + tr + `"}`
	}
	tests := []struct {
		name     string
		in       string
		answer   StepAnswer
		err      error
		decision string // "" for no output (the call passes to Claude Code's own check)
		reason   string
		asked    bool
	}{
		{"allow-listed tool passes", input("Read", "toolu_1", one), pending, nil, "", "", false},
		{"allow-listed MCP server passes", input("mcp__github__create_issue", "toolu_1", one), pending, nil, "", "", false},
		{"a rule in the allow-list leaves the tool to Claude Code", input("Edit", "toolu_1", one), pending, nil, "", "", false},
		{"pending, the message's only call: pause on it", input("Bash", "toolu_1", one), pending, nil, "defer", "still waiting", true},
		{"pending beside another call: deny, no pause (Claude Code would drop the other)", input("Bash", "toolu_2", two), pending, nil, "deny", "still waiting", true},
		{"pending, transcript unreadable: deny, never risk a call", input("Bash", "toolu_1", "/no/such/file"), pending, nil, "deny", "still waiting", true},
		{"approved: allow with the input the owner allowed", input("Bash", "toolu_1", one), allowed, nil, "allow", "allowed", true},
		{"refused: deny with the owner's message", input("Bash", "toolu_1", one), refused, nil, "deny", "not today", true},
		{"Prickle unreachable: deny", input("Bash", "toolu_1", one), StepAnswer{}, errors.New("connection refused"), "deny", "could not ask your owner (connection refused)", true},
		{"not JSON: deny", `{"tool_name":`, pending, nil, "deny", "not JSON", false},
		{"another event: nothing", `{"hook_event_name":"PostToolUse","tool_name":"Bash"}`, pending, nil, "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &fakeAsker{answer: tt.answer, err: tt.err}
			dir := t.TempDir()
			var out bytes.Buffer
			env := HookEnv{RunToken: "prk_r_run", Allowed: []string{"Read", "mcp__github", "Edit(src/**)"}, SessionDir: dir}
			if err := RunHook(context.Background(), strings.NewReader(tt.in), &out, env, a); err != nil {
				t.Fatal(err)
			}
			if (len(a.asked) == 1) != tt.asked || len(a.asked) > 1 {
				t.Fatalf("asked %q, want asked: %v", a.asked, tt.asked)
			}
			if tt.asked && !strings.HasPrefix(a.asked[0], "prk_r_run Bash toolu_") {
				t.Errorf("asked %q: with the run token, the tool and its tool_use_id", a.asked[0])
			}
			if tt.decision == "" {
				if out.Len() != 0 {
					t.Errorf("output %q, want none", out.String())
				}
				return
			}
			var o hookOutput
			if err := json.Unmarshal(out.Bytes(), &o); err != nil {
				t.Fatalf("output %q: %v", out.String(), err)
			}
			h := o.HookSpecificOutput
			if h.HookEventName != "PreToolUse" || h.Decision != tt.decision || !strings.Contains(h.Reason, tt.reason) {
				t.Errorf("answer %+v, want %s with %q", h, tt.decision, tt.reason)
			}
			if tt.decision == "allow" && string(h.UpdatedInput) != string(allowed.UpdatedInput) {
				t.Errorf("updatedInput %s", h.UpdatedInput)
			}
			if tt.asked && tt.err == nil {
				got, err := LoadAsked(dir)
				if err != nil || got == nil || got.StepID != "stp_1" || got.Name != "Bash" || !strings.Contains(string(got.Input), "git push origin main") {
					t.Errorf("asked call recorded as %+v (%v)", got, err)
				}
			}
		})
	}
}

// An owner's edit runs instead of the call asked, and the model is told so
// beside its result (Claude Code reads no reason of an allow); a call allowed
// as asked, reworded or not, carries no note.
func TestHookTellsTheModelOfAnEdit(t *testing.T) {
	in := `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm -rf build","description":"Clean"},"tool_use_id":"toolu_1"}`
	const msg = "allowed as your owner edited it: your permission layer makes this call instead of the one you asked, once, now: Bash {…}"
	for _, tc := range []struct {
		name, updated, note string
	}{
		{"edited", `{"command":"rm -rf build/tmp","description":"Clean"}`, "Prickle: " + msg},
		{"as asked, its description as first asked", `{"command":"rm -rf build","description":"Clean the build"}`, ""},
		{"as asked", `{"description":"Clean","command":"rm -rf build"}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &fakeAsker{answer: StepAnswer{Behavior: "allow", Status: "consumed", StepID: "stp_1", Message: msg, UpdatedInput: json.RawMessage(tc.updated)}}
			var out bytes.Buffer
			if err := RunHook(context.Background(), strings.NewReader(in), &out, HookEnv{RunToken: "prk_r_run"}, a); err != nil {
				t.Fatal(err)
			}
			var o hookOutput
			if err := json.Unmarshal(out.Bytes(), &o); err != nil {
				t.Fatal(err)
			}
			h := o.HookSpecificOutput
			if h.Decision != "allow" || string(h.UpdatedInput) != tc.updated || h.AdditionalContext != tc.note {
				t.Errorf("answer %+v\n want allow with %s and note %q", h, tc.updated, tc.note)
			}
		})
	}
}

// With no run token nothing can be asked: the call is denied, never let through.
func TestHookWithoutARunToken(t *testing.T) {
	var out bytes.Buffer
	a := &fakeAsker{}
	if err := RunHook(context.Background(), strings.NewReader(`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{}}`), &out, HookEnv{}, a); err != nil {
		t.Fatal(err)
	}
	if len(a.asked) != 0 || !strings.Contains(out.String(), `"permissionDecision":"deny"`) {
		t.Errorf("asked %q, output %s", a.asked, out.String())
	}
}

// Claude Code writes the call's message to the transcript as the hook
// starts; on a loaded machine it comes a moment later, and the run still
// pauses on a call that is its message's only one.
func TestHookWaitsForTheTranscript(t *testing.T) {
	written := transcript(t, "toolu_9")
	b, err := os.ReadFile(written)
	if err != nil {
		t.Fatal(err)
	}
	late := filepath.Join(t.TempDir(), "late.jsonl")
	go func() {
		time.Sleep(300 * time.Millisecond)
		_ = os.WriteFile(late, b, 0o600)
	}()
	a := &fakeAsker{answer: StepAnswer{Behavior: "deny", Status: "pending", StepID: "stp_9", Message: "still waiting"}}
	var out bytes.Buffer
	in := `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"x"},"tool_use_id":"toolu_9","transcript_path":"` + late + `"}`
	if err := RunHook(context.Background(), strings.NewReader(in), &out, HookEnv{RunToken: "prk_r_run"}, a); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"permissionDecision":"defer"`) {
		t.Errorf("answer %s, want defer once the transcript shows the call alone", out.String())
	}
}
