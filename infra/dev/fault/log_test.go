package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFailuresCountsFiveHundredsAndErrors(t *testing.T) {
	for _, tt := range []struct {
		name, log string
		want      int
	}{
		{"a clean run", `{"level":"INFO","msg":"tool call","status":200}
{"level":"WARN","msg":"refused","status":403}
ready: Ctrl-C stops the stack
`, 0},
		{"a 500 and an error line", `{"level":"INFO","msg":"runner request","status":500}
{"level":"ERROR","msg":"store allowed step: conflict"}
{"level":"INFO","msg":"tool call","status":200}
`, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "local-stack.log")
			if err := os.WriteFile(path, []byte(tt.log), 0o600); err != nil {
				t.Fatal(err)
			}
			n, examples, err := failures(path)
			if err != nil || n != tt.want || len(examples) != tt.want {
				t.Errorf("failures = %d %v %v; want %d", n, examples, err, tt.want)
			}
		})
	}
}
