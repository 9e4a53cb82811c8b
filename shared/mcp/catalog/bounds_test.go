package catalog_test

import (
	"strings"
	"testing"

	"github.com/useprickle/prickle/shared/mcp/catalog"
)

// TestArgumentBoundsNameTheFieldAndTheLimit: request_step's input over a
// bound, and any tool's argument nested too deep, fail validation with the
// field and the limit named, before the schema is evaluated.
func TestArgumentBoundsNameTheFieldAndTheLimit(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	for _, tc := range []struct {
		tool, args, want string
	}{
		{"request_step", `{"tool_name":"Bash","input":{"a":` + deep(31) + `}}`, ""},
		{"request_step", `{"tool_name":"Bash","input":{"a":` + deep(32) + `}}`, "/input: input nests deeper than 32 levels"},
		{"request_step", `{"tool_name":"Bash","input":{"a":` + deep(999) + `}}`, "/input: input nests deeper than 32 levels"},
		{"request_step", `{"tool_name":"Bash","input":{"a":[` + strings.Repeat("0,", 1000) + `0]}}`, "/input: input holds more than 1000 keys"},
		{"request_step", `{"tool_name":"Bash","input":{"c":"` + strings.Repeat("x", 70_000) + `"}}`, "/input: input is 70008 bytes as canonical JSON: the limit of a step's input size is 65536 bytes"},
		{"request_step", `{"tool_name":"Bash","input":"not an object"}`, "/input: got string, want object"},
		{"request_step", `{"tool_name":"Pay","input":{},"kind":"spending","amount":{"value":-5,"unit":"USD"}}`, "/amount/value: is below zero"},
		{"request_step", `{"tool_name":"Pay","input":{},"kind":"spending","amount":{"value":-0.000001,"unit":"USD"}}`, "/amount/value: is below zero"},
		{"request_step", `{"tool_name":"Pay","input":{},"kind":"spending","amount":{"value":-0,"unit":"USD"}}`, ""},
		{"request_step", `{"tool_name":"Pay","input":{},"kind":"spending","amount":{"value":0,"unit":"USD"}}`, ""},
		{"request_step", `{"tool_name":"Pay","input":{},"kind":"spending","amount":{"value":12.5,"unit":"USD"}}`, ""},
		{"request_step", `{"tool_name":"Pay","input":{},"kind":"spending","amount":{"value":0.000001,"unit":"USD"}}`, ""},
		{"request_step", `{"tool_name":"Pay","input":{},"kind":"spending","amount":{"value":1e-6,"unit":"USD"}}`, ""},
		{"request_step", `{"tool_name":"Pay","input":{},"kind":"spending","amount":{"value":123456.654321,"unit":"USD"}}`, ""},
		{"request_step", `{"tool_name":"Pay","input":{},"kind":"spending","amount":{"value":1.50e3,"unit":"USD"}}`, ""},
		{"request_step", `{"tool_name":"Pay","input":{},"kind":"spending","amount":{"value":0e-400,"unit":"USD"}}`, ""},
		{"request_step", `{"tool_name":"Pay","input":{},"kind":"spending","amount":{"value":1000000000,"unit":"USD"}}`, ""},
		{"request_step", `{"tool_name":"Pay","input":{},"kind":"spending","amount":{"value":0.0000004,"unit":"USD"}}`, "/amount/value: has more than 6 decimal places"},
		{"request_step", `{"tool_name":"Pay","input":{},"kind":"spending","amount":{"value":0.1234567,"unit":"USD"}}`, "/amount/value: has more than 6 decimal places"},
		{"request_step", `{"tool_name":"Pay","input":{},"kind":"spending","amount":{"value":15e-7,"unit":"USD"}}`, "/amount/value: has more than 6 decimal places"},
		{"request_step", `{"tool_name":"Pay","input":{},"kind":"spending","amount":{"value":1e-400,"unit":"USD"}}`, "/amount/value: has more than 6 decimal places"},
		{"request_step", `{"tool_name":"Pay","input":{},"kind":"spending","amount":{"value":1e308,"unit":"USD"}}`, "/amount/value: is above 1000000000"},
		{"request_step", `{"tool_name":"Pay","input":{},"kind":"spending","amount":{"value":1e400,"unit":"USD"}}`, "/amount/value: is above 1000000000"},
		{"request_step", `{"tool_name":"Pay","input":{},"kind":"spending","amount":{"value":1000000000.5,"unit":"USD"}}`, "/amount/value: is above 1000000000"},
		{"request_step", `{"tool_name":"Pay","input":{},"kind":"spending","amount":{"value":-1e400,"unit":"USD"}}`, "/amount/value: is below zero"},
		{"accept_task", `{"task_id":"tsk_1","extra":` + deep(32) + `}`, ""},
		{"accept_task", `{"task_id":"tsk_1","extra":` + deep(33) + `}`, "/extra: nests deeper than 32 levels, the limit of a tool argument"},
		{"return_result", `{"task_id":"tsk_1","summary":"s","evidence":[{"kind":"note","summary":"x","more":` + deep(1000) + `}]}`, "/evidence: nests deeper than 32 levels"},
	} {
		tool, _ := catalog.Lookup(tc.tool)
		err := tool.ValidateInput([]byte(tc.args))
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s %.60s: %v, want accepted", tc.tool, tc.args, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %.60s: %v, want %q", tc.tool, tc.args, err, tc.want)
		}
	}
}
