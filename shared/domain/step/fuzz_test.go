package step_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/useprickle/prickle/shared/domain/step"
)

// FuzzCanonical: any bytes as a step's input. Canonicalisation never
// panics; what it accepts comes out as valid JSON that canonicalises to
// itself (one spelling per call, so one fingerprint); CheckInput's answer
// keeps within the limits; the "Does" line of the owner's message is one
// short valid line.
func FuzzCanonical(f *testing.F) {
	for _, seed := range []string{
		`{"command":"git push origin main","timeout":30}`,
		`{"b":1,"a":{"d":[1,2,{"z":null,"y":true}],"c":"x"}}`,
		`{"x":1e400,"n":12345678901234567890,"f":0.10000000000000000555111512312578,"g":-0.0}`,
		`{"s":"\u00e9\u0041\ud83d\ude00 <&> \"q\""}`,
		`{"file_path":"/etc/passwd","content":"x"}`,
		`{"url":"https://example.com/?q=1#f","prompt":"p"}`,
		`{"a":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`,
		`{"a":1,"a":2}`,
		`{}`, `[]`, `null`, `"s"`, `{"a":}`, `{"a":1}x`, "{\"a\":\"\xff\"}", ``,
	} {
		f.Add("Bash", []byte(seed))
	}
	f.Add("mcp__github__create_pull_request", []byte(`{"title":"t","body":"b"}`))
	f.Add("WebFetch", []byte(`{"url":"javascript:alert(1)"}`))
	f.Fuzz(func(t *testing.T, toolName string, input []byte) {
		canonical, err := step.Canonical(input)
		if err == nil {
			if !json.Valid(canonical) {
				t.Fatalf("Canonical(%q) = %q: not JSON", input, canonical)
			}
			again, err := step.Canonical(canonical)
			if err != nil || !bytes.Equal(again, canonical) {
				t.Fatalf("Canonical is not idempotent: %q → %q → %q (%v)", input, canonical, again, err)
			}
			if step.Fingerprint("tsk_1", toolName, canonical) != step.Fingerprint("tsk_1", toolName, again) {
				t.Fatal("the same canonical input has two fingerprints")
			}
		}
		if checked, err := step.CheckInput(input); err == nil {
			if len(checked) > step.MaxInputBytes || !json.Valid(checked) || checked[0] != '{' {
				t.Fatalf("CheckInput accepted %q as %d bytes %q", input, len(checked), checked)
			}
		}
		does := step.Summary(toolName, input)
		if strings.ContainsAny(does, "\n\r") || !utf8.ValidString(does) || len(does) > 1024 {
			t.Fatalf("Summary(%q, %q) = %q: not one short valid line", toolName, input, does)
		}
	})
}
