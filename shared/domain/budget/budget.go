// Package budget holds owners' spending budgets: how much each of an
// owner's agents may spend per day in a project, per unit (USD, EUR, credits),
// and whether spending within it is allowed without asking. Amounts are kept
// in millionths of a unit as integers, so that adding up spend is exact and a
// conditional write can compare it. It is pure: no AWS, no MCP.
package budget

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Micros is an amount in millionths of its unit.
type Micros int64

// Scale is how many Micros make one unit.
const Scale = 1_000_000

// MaxLimit is the largest daily limit accepted, in units: far above any
// agent's day, far below where int64 micros would overflow.
const MaxLimit = 1_000_000_000

// FromUnits converts an amount in units (as an agent sends it) to Micros,
// rounding to the nearest millionth; ok is false for a negative, NaN,
// infinite or absurdly large amount.
func FromUnits(v float64) (Micros, bool) {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > MaxLimit {
		return 0, false
	}
	return Micros(math.Round(v * Scale)), true
}

// Parse reads an amount as a person types it ("50", "12.5").
func Parse(s string) (Micros, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not an amount", s)
	}
	m, ok := FromUnits(v)
	if !ok {
		return 0, fmt.Errorf("an amount is between 0 and %d", MaxLimit)
	}
	return m, nil
}

// String writes the amount in units with no needless zeros: "50", "12.5", "0.000001".
func (m Micros) String() string {
	sign := ""
	if m < 0 {
		sign, m = "-", -m
	}
	whole, frac := int64(m)/Scale, int64(m)%Scale
	if frac == 0 {
		return sign + strconv.FormatInt(whole, 10)
	}
	return sign + strconv.FormatInt(whole, 10) + "." + strings.TrimRight(fmt.Sprintf("%06d", frac), "0")
}

// Budget is one owner's daily allowance per agent, in one project and one unit.
type Budget struct {
	Project string `json:"project"`
	Owner   string `json:"owner"`
	Unit    string `json:"unit"`
	// PerAgentPerDay is how much each of the owner's agents may spend per UTC day.
	PerAgentPerDay Micros `json:"per_agent_per_day"`
	// AutoAllow lets a spending step within what is left be allowed without
	// asking, when the call's input holds the amount it declares where the
	// budget reads it (AmountOf); off, the owner is asked every time and
	// told what is left.
	AutoAllow bool `json:"auto_allow"`
	// AmountField is the top-level input field whose number is a call's
	// amount in the budget's unit; AmountTool, if set, the one tool whose
	// calls the budget reads (any tool's otherwise). A budget stored before
	// they existed has neither, and allows nothing without asking.
	AmountField string    `json:"amount_field,omitempty"`
	AmountTool  string    `json:"amount_tool,omitempty"`
	SetBy       string    `json:"set_by"`
	SetAt       time.Time `json:"set_at"`
}

var (
	unitPattern  = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,15}$`)
	fieldPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]{0,63}$`)
	// toolPattern is request_step's tool_name pattern and length.
	toolPattern = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,200}$`)
)

// Check refuses a budget that cannot be kept: a missing unit, a limit out of
// bounds, or auto-allow without knowing where a call holds its amount.
func (b Budget) Check() error {
	switch {
	case !unitPattern.MatchString(b.Unit):
		return fmt.Errorf("unit %q: letters, digits, _ and -, at most 16, starting with a letter (e.g. USD)", b.Unit)
	case b.PerAgentPerDay < 0 || b.PerAgentPerDay > MaxLimit*Scale:
		return fmt.Errorf("a daily limit is between 0 and %d %s", MaxLimit, b.Unit)
	case b.AmountField != "" && !fieldPattern.MatchString(b.AmountField):
		return fmt.Errorf("input field %q: a letter or _, then letters, digits, _, . and -, at most 64 (e.g. amount)", b.AmountField)
	case b.AmountTool != "" && !toolPattern.MatchString(b.AmountTool):
		return fmt.Errorf("tool %q: letters, digits, _, ., : and -, at most 200 (e.g. buy_credits)", b.AmountTool)
	case b.AmountTool != "" && b.AmountField == "":
		return fmt.Errorf("name the input field of %s calls that holds the amount", b.AmountTool)
	case b.AutoAllow && b.AmountField == "":
		return fmt.Errorf("auto-allow needs the input field that holds a call's amount in %s (e.g. amount): without it, a budget can only trust the amount an agent declares", b.Unit)
	}
	return nil
}

// Day is the UTC calendar day a spend counts against, as "2026-12-01".
func Day(t time.Time) string { return t.UTC().Format("2006-01-02") }

// Spend is what one agent spent in one unit on one day.
type Spend struct {
	Project string `json:"project"`
	Owner   string `json:"owner"`
	Unit    string `json:"unit"`
	Agent   string `json:"agent"`
	Day     string `json:"day"`
	Spent   Micros `json:"spent"`
}

// Left is what the budget leaves of a day's limit after spent; never below zero.
func (b Budget) Left(spent Micros) Micros {
	if spent >= b.PerAgentPerDay {
		return 0
	}
	return b.PerAgentPerDay - spent
}

// Note says what is left, as the owner's message and the agent's answer show it.
func (b Budget) Note(agent string, spent Micros) string {
	return fmt.Sprintf("%s %s left of %s %s today for %s (budget of %s)", b.Left(spent), b.Unit, b.PerAgentPerDay, b.Unit, agent, b.Owner)
}
