package runner

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/domain/pulse"
	"github.com/useprickle/prickle/shared/team"
)

// TestTheDocStatesTheRules ties docs/file-claims.md to the numbers and
// names it repeats: the edit tools, the guards and the default, the bounds
// of a pulse's files, the default window and the settings endpoint.
func TestTheDocStatesTheRules(t *testing.T) {
	b, err := os.ReadFile("../../../../docs/file-claims.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := regexp.MustCompile(`\s+`).ReplaceAllString(string(b), " ")
	want := []string{
		fmt.Sprintf("at most %d", MaxPulseFiles),
		fmt.Sprintf("over %d characters", MaxPulseFile),
		fmt.Sprintf("(%d minutes unless the project sets another", int(team.DefaultPulseStaleAfter.Minutes())),
		fmt.Sprintf("| `%s` (default) |", pulse.DefaultGuard),
		"`POST " + ProjectPath + "`",
		fmt.Sprintf("at most %d paths are claimed per call", maxShellClaims),
		fmt.Sprintf("up to %d paths", maxTreeEntries),
		"`" + treeFile + "`",
	}
	var tools []string
	for _, tool := range EditTools {
		tools = append(tools, "`"+tool+"`")
	}
	want = append(want, strings.Join(tools[:len(tools)-1], ", ")+" or "+tools[len(tools)-1])
	for _, g := range pulse.Guards {
		want = append(want, "| `"+g+"`")
	}
	want = append(want, "--guard warn # "+strings.Join(pulse.Guards, " | "))
	// The message the doc quotes is the one the hook writes.
	now := time.Date(2026, 12, 3, 14, 10, 0, 0, time.UTC)
	h := holding{Agent: "alice/writer", TaskID: "tsk_…", Claim: "src/app.ts", Since: now.Add(-8 * time.Minute), Until: now.Add(22 * time.Minute)}
	want = append(want, "*"+h.denied("src/app.ts", now)+"*")
	for _, w := range want {
		if !strings.Contains(doc, w) {
			t.Errorf("docs/file-claims.md does not say %q", w)
		}
	}
}
