package wakeup

import (
	"os"
	"strings"
	"testing"
)

// TestTargetIsTheTemplatesFunction: Target names a function of template.yaml,
// or the local stack refuses to start (its bus finds no handler for the rule).
func TestTargetIsTheTemplatesFunction(t *testing.T) {
	b, err := os.ReadFile("../../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "\n  "+Target+":\n    Type: AWS::Serverless::Function") {
		t.Fatalf("template.yaml has no function %s", Target)
	}
}
