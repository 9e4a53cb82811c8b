package budget_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/domain/budget"
)

func TestFromUnitsAndString(t *testing.T) {
	cases := []struct {
		in   float64
		ok   bool
		want string
	}{
		{50, true, "50"},
		{12.5, true, "12.5"},
		{0.1, true, "0.1"},
		{0.000001, true, "0.000001"},
		{0, true, "0"},
		{2.675, true, "2.675"},
		{-1, false, ""},
		{math.NaN(), false, ""},
		{math.Inf(1), false, ""},
		{budget.MaxLimit + 1, false, ""},
	}
	for _, c := range cases {
		m, ok := budget.FromUnits(c.in)
		if ok != c.ok {
			t.Errorf("FromUnits(%v) ok = %v, want %v", c.in, ok, c.ok)
			continue
		}
		if ok && m.String() != c.want {
			t.Errorf("FromUnits(%v) = %s, want %s", c.in, m, c.want)
		}
	}
	// Ten spends of 0.1 add up to exactly 1: no float drift.
	var sum budget.Micros
	for range 10 {
		m, _ := budget.FromUnits(0.1)
		sum += m
	}
	if sum.String() != "1" {
		t.Errorf("10 × 0.1 = %s, want 1", sum)
	}
}

func TestParse(t *testing.T) {
	for in, want := range map[string]string{"50": "50", " 12.50 ": "12.5", "0": "0"} {
		m, err := budget.Parse(in)
		if err != nil || m.String() != want {
			t.Errorf("Parse(%q) = %s, %v; want %s", in, m, err, want)
		}
	}
	for _, bad := range []string{"", "abc", "-5", "1e12", "NaN"} {
		if _, err := budget.Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}

func TestCheckLeftNote(t *testing.T) {
	b := budget.Budget{Project: "web", Owner: "alice", Unit: "USD", PerAgentPerDay: 50 * budget.Scale}
	if err := b.Check(); err != nil {
		t.Fatal(err)
	}
	for _, unit := range []string{"", "U S D", "1USD", "USDOLLARSANDMORE1"} {
		bad := b
		bad.Unit = unit
		if bad.Check() == nil {
			t.Errorf("unit %q accepted", unit)
		}
	}
	if got := b.Left(12_500_000).String(); got != "37.5" {
		t.Errorf("Left = %s, want 37.5", got)
	}
	if got := b.Left(60 * budget.Scale).String(); got != "0" {
		t.Errorf("Left past the limit = %s, want 0", got)
	}
	want := "37.5 USD left of 50 USD today for alice/builder (budget of alice)"
	if got := b.Note("alice/builder", 12_500_000); got != want {
		t.Errorf("Note = %q, want %q", got, want)
	}
	if d := budget.Day(time.Date(2026, 12, 1, 23, 59, 0, 0, time.FixedZone("x", -3600))); d != "2026-12-02" {
		t.Errorf("Day is UTC: got %s", d)
	}
}

func TestCheckNeedsWhereTheAmountIsForAutoAllow(t *testing.T) {
	b := budget.Budget{Project: "web", Owner: "alice", Unit: "USD", PerAgentPerDay: 50 * budget.Scale}
	cases := []struct {
		field, tool string
		auto, ok    bool
	}{
		{"", "", false, true},
		{"", "", true, false},
		{"amount", "", true, true},
		{"amount", "buy_credits", true, true},
		{"", "buy_credits", false, false},
		{"a b", "", true, false},
		{"1st", "", true, false},
		{"amount", "buy credits", true, false},
	}
	for _, c := range cases {
		x := b
		x.AmountField, x.AmountTool, x.AutoAllow = c.field, c.tool, c.auto
		if err := x.Check(); (err == nil) != c.ok {
			t.Errorf("Check(field %q, tool %q, auto %v) = %v, want ok=%v", c.field, c.tool, c.auto, err, c.ok)
		}
	}
}

func TestAmountOfAndChecked(t *testing.T) {
	b := budget.Budget{Owner: "alice", Unit: "USD", AmountField: "amount", AmountTool: "charge"}
	cases := []struct {
		tool, input string
		want        string // the amount read, or why not
	}{
		{"charge", `{"amount":5}`, "5"},
		{"charge", `{"amount":12.50}`, "12.5"},
		{"charge", `{"amount":0.0000001}`, "0.000001"},
		{"charge", `{"amount":5.0000001}`, "5.000001"},
		{"charge", `{"amount":1.5e2}`, "150"},
		{"charge", `{"amount":0}`, "0"},
		{"charge", `{"amount":"5"}`, "holds no amount in field amount"},
		{"charge", `{"amount":null}`, "holds no amount in field amount"},
		{"charge", `{"amount":{"value":5}}`, "holds no amount in field amount"},
		{"charge", `{"total":5}`, "holds no amount in field amount"},
		{"charge", `{"amount":-1}`, "not an amount between 0 and 1000000000"},
		{"charge", `{"amount":1000000001}`, "not an amount between 0 and 1000000000"},
		{"charge", `{"amount":1e31}`, "not an amount between 0 and"},
		{"charge", `{"amount":1e-400}`, "not an amount between 0 and"},
		{"charge", `{"amount":1.00000000000000000000000000000000000000000000000000000000000000001}`, "not an amount between 0 and"},
		{"refund", `{"amount":5}`, "reads amounts from charge calls only, not refund"},
		{"charge", `[5]`, "not an object"},
	}
	for _, c := range cases {
		m, why := b.AmountOf(c.tool, []byte(c.input))
		got := why
		if why == "" {
			got = m.String()
		}
		if !strings.Contains(got, c.want) {
			t.Errorf("AmountOf(%s, %s) = %q, want %q", c.tool, c.input, got, c.want)
		}
	}
	if _, why := (budget.Budget{Owner: "alice", Unit: "USD"}).AmountOf("charge", []byte(`{"amount":5}`)); !strings.Contains(why, "does not say which input field holds a call's amount") {
		t.Errorf("a budget without a field reads amounts: %q", why)
	}
	if why := b.Checked("charge", []byte(`{"amount":5}`), 5*budget.Scale); why != "" {
		t.Errorf("Checked(5 for 5) = %q", why)
	}
	if why := b.Checked("charge", []byte(`{"amount":5000}`), 10_000); why != "the step declares 0.01 USD but its input's amount says 5000 USD" {
		t.Errorf("Checked(0.01 for 5000) = %q", why)
	}
	if got := b.ReadsFrom(); got != "input field amount of charge calls" {
		t.Errorf("ReadsFrom = %q", got)
	}
}
