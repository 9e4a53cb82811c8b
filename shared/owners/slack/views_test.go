package slack_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/useprickle/prickle/shared/owners/slack"
)

// TestTheEditDocStatesTheSlackField: docs/edit-then-allow.md says how long a
// call Slack's Edit modal holds, as MaxEditField is.
func TestTheEditDocStatesTheSlackField(t *testing.T) {
	b, err := os.ReadFile("../../../docs/edit-then-allow.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Join(strings.Fields(string(b)), " ")
	if want := fmt.Sprintf("A call longer than a Slack field (%d characters) is edited on the page instead", slack.MaxEditField); !strings.Contains(doc, want) {
		t.Errorf("docs/edit-then-allow.md does not say %q", want)
	}
}
