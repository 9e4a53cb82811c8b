package runner

import (
	"encoding/json"
	"reflect"
	"testing"
)

// Copilot CLI and opencode read one flat object each, under their own
// names: an allow carries the edit and its note, a deny its reason, and an
// edit that is not JSON is never run (the answer is the CLI's deny).
func TestFlatAnswersUnderEachCLIsNames(t *testing.T) {
	edit := json.RawMessage(`{"path":"a.txt"}`)
	for _, c := range []struct {
		name string
		cli  agentCLI
		a    gateAnswer
		want map[string]any
	}{
		{"copilot deny", copilotTemplate, gateAnswer{Reason: "refused"},
			map[string]any{"permissionDecision": "deny", "permissionDecisionReason": "refused"}},
		{"copilot allow as asked", copilotTemplate, gateAnswer{Allow: true},
			map[string]any{"permissionDecision": "allow"}},
		{"copilot allow edited", copilotTemplate, gateAnswer{Allow: true, Input: edit, Note: "edited"},
			map[string]any{"permissionDecision": "allow", "modifiedArgs": map[string]any{"path": "a.txt"}, "additionalContext": "edited"}},
		{"copilot edit not JSON", copilotTemplate, gateAnswer{Allow: true, Input: json.RawMessage(`{"path":`)},
			map[string]any{"permissionDecision": "deny", "permissionDecisionReason": gateFailed}},
		{"opencode deny", opencodeTemplate, gateAnswer{Reason: "refused"},
			map[string]any{"decision": "deny", "reason": "refused"}},
		{"opencode allow edited", opencodeTemplate, gateAnswer{Allow: true, Input: edit, Note: "edited"},
			map[string]any{"decision": "allow", "args": map[string]any{"path": "a.txt"}, "note": "edited"}},
		{"opencode edit not JSON", opencodeTemplate, gateAnswer{Allow: true, Input: json.RawMessage(`[`)},
			map[string]any{"decision": "deny", "reason": gateFailed}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got map[string]any
			if err := json.Unmarshal(c.cli.answer(c.a), &got); err != nil {
				t.Fatalf("answer is not JSON: %v", err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("answer = %v, want %v", got, c.want)
			}
		})
	}
}
