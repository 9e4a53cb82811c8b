package team

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/domain/step"
)

// TestTheEditDocStatesTheAnswersAndBounds: docs/edit-then-allow.md quotes
// request_step's answers to an edited step as they are, and states the
// bounds of an edit and the use window as the constants are.
func TestTheEditDocStatesTheAnswersAndBounds(t *testing.T) {
	b, err := os.ReadFile("../../docs/edit-then-allow.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Join(strings.Fields(string(b)), " ")
	for _, want := range []string{
		msgEditedThis + "…", msgEditedThat, msgEditedLeftThis + "…", msgEditedLeftThat, `; your owner says: "…"`,
		fmt.Sprintf("a JSON object of at most %d KiB as canonical JSON, nesting at most %d levels, holding at most %d keys and array elements",
			step.MaxInputBytes>>10, step.MaxInputDepth, step.MaxInputElements),
		fmt.Sprintf("Within the same %d minutes as any approval, and once", int(step.UseWindow/time.Minute)),
	} {
		if !strings.Contains(doc, strings.Join(strings.Fields(want), " ")) {
			t.Errorf("docs/edit-then-allow.md does not say %q", want)
		}
	}
}
