package modelspend_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/domain/modelspend"
)

// TestTheDocStatesTheBounds: docs/model-spend.md's numbers are these constants'.
func TestTheDocStatesTheBounds(t *testing.T) {
	b, err := os.ReadFile("../../../docs/model-spend.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Join(strings.Fields(string(b)), " ")
	thousands := func(n int64) string {
		s := fmt.Sprint(n)
		for i := len(s) - 3; i > 0; i -= 3 {
			s = s[:i] + "," + s[i:]
		}
		return s
	}
	for _, want := range []string{
		fmt.Sprintf("(`cost_usd` %d, tokens %s, `turns` %s, `duration_ms` a week, `model` %d characters)",
			modelspend.MaxRunCostUSD, thousands(modelspend.MaxTokens), thousands(modelspend.MaxTurns), modelspend.MaxModel),
		fmt.Sprintf("a daily cap in USD for each of their own agents (0.01 to %s;", thousands(modelspend.MaxCapUSD)),
		fmt.Sprintf("added to its agent's UTC day (kept %d days) and month (kept %d days)",
			int(modelspend.DayRetention/(24*time.Hour)), int(modelspend.MonthRetention/(24*time.Hour))),
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("docs/model-spend.md does not say %q", want)
		}
	}
	if modelspend.MaxDurationMS != 7*24*3600*1000 {
		t.Errorf("the doc says a run lasts at most a week; MaxDurationMS is %d", modelspend.MaxDurationMS)
	}
}
