package invariants

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/domain/budget"
	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/domain/wakeup"
)

func TestCheckCount(t *testing.T) {
	for _, tt := range []struct {
		stored, want int
		kind         string
	}{{3, 3, ""}, {5, 3, DoubleCount}, {2, 3, MissingEffect}, {0, 0, ""}} {
		var r Report
		checkCount(&r, "grant g1 of web: uses", tt.stored, tt.want)
		got := ""
		if len(r.Violations) == 1 {
			got = r.Violations[0].Kind
		}
		if got != tt.kind || len(r.Violations) > 1 {
			t.Errorf("stored %d, want %d: %+v; want kind %q", tt.stored, tt.want, r.Violations, tt.kind)
		}
	}
}

func TestCheckWakeUps(t *testing.T) {
	ok := func(event, run string, code int) wakeup.Attempt {
		return wakeup.Attempt{EventID: event, RunID: run, Agent: "alice/writer", StatusCode: code}
	}
	for _, tt := range []struct {
		name     string
		attempts []wakeup.Attempt
		doubles  int
		wakeUps  int
	}{
		{"one run per event", []wakeup.Attempt{ok("e1", "r1", 204), ok("e2", "r2", 204)}, 0, 2},
		{"a failed delivery tried again in the same run", []wakeup.Attempt{ok("e1", "r1", 503), ok("e1", "r1", 204)}, 0, 1},
		{"one event, two runs", []wakeup.Attempt{ok("e1", "r1", 204), ok("e1", "r2", 204)}, 2, 1},
		{"one run delivered twice", []wakeup.Attempt{ok("e1", "r1", 204), ok("e1", "r1", 200)}, 1, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var r Report
			checkWakeUps(&r, "tsk_1", tt.attempts)
			if r.Count(DoubleCount) != tt.doubles || r.WakeUps != tt.wakeUps {
				t.Errorf("%d double counts over %d wake-ups (%+v); want %d over %d", r.Count(DoubleCount), r.WakeUps, r.Violations, tt.doubles, tt.wakeUps)
			}
		})
	}
}

func TestApprovedSpend(t *testing.T) {
	at := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	usd := []budget.Budget{{Project: "web", Owner: "alice", Unit: "USD", PerAgentPerDay: 50 * budget.Scale, AmountField: "usd"}}
	spending := func(status step.Status, allowedBy string, value float64, input string) step.Step {
		return step.Step{ID: "st_1", Project: "web", Agent: "alice/writer", ToolName: "buy", Kind: "spending", Status: status,
			Amount: &step.Amount{Value: value, Unit: "USD"}, AllowedBy: allowedBy, DecidedAt: &at, Input: json.RawMessage(input)}
	}
	for _, tt := range []struct {
		name    string
		s       step.Step
		budgets []budget.Budget
		want    budget.Micros
		ok      bool
	}{
		{"approved by the owner", spending(step.Approved, "", 5, `{"usd":5}`), usd, 5 * budget.Scale, true},
		{"the input says more", spending(step.Consumed, "", 5, `{"usd":7}`), usd, 7 * budget.Scale, true},
		{"refused", spending(step.Refused, "", 5, `{"usd":5}`), usd, 0, false},
		{"allowed by the budget (counted as its debit)", spending(step.Consumed, "budget USD", 5, `{"usd":5}`), usd, 0, false},
		{"no budget in its unit", spending(step.Approved, "", 5, `{"usd":5}`), nil, 0, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			k, amount, ok := approvedSpend(tt.s, tt.budgets)
			if ok != tt.ok || amount != tt.want || (ok && k != "web/alice/USD/alice/writer/2026-12-07") {
				t.Errorf("approvedSpend = %q %d %v; want %d %v", k, amount, ok, tt.want, tt.ok)
			}
		})
	}
}
