package step_test

import (
	"encoding/json"
	"testing"

	"github.com/useprickle/prickle/shared/domain/step"
)

// BenchmarkCanonical is what request_step does to the input of every call
// it is asked about before fingerprinting it: a Bash call as Claude Code
// sends it, and a larger, nested tool input.
//
//	go test -run '^$' -bench . -benchmem ./shared/domain/step/
func BenchmarkCanonical(b *testing.B) {
	inputs := map[string]json.RawMessage{
		"bash": json.RawMessage(`{"command": "git push origin main", "description": "Publish the reviewed branch", "timeout": 120000}`),
		"nested": json.RawMessage(`{"file_path":"/work/site/hero.md","edits":[{"old_string":"Ship faster","new_string":"Coordinate your agents","replace_all":false},` +
			`{"old_string":"Try it","new_string":"Try the demo","replace_all":true}],"meta":{"z":1,"a":[3,2,1],"unicode":"caf\u00e9 <b>&</b>","n":12345678901234567890}}`),
	}
	for name, in := range inputs {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := step.Canonical(in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
