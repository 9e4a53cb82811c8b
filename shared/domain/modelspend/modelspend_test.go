package modelspend_test

import (
	"strings"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/domain/budget"
	"github.com/useprickle/prickle/shared/domain/modelspend"
)

func TestParseReportTakesWhatClaudeCodeReports(t *testing.T) {
	r, ok, err := modelspend.ParseReport([]byte(`{"cost_usd":0.0123,"input_tokens":1200,"output_tokens":300,"turns":5,"duration_ms":8656,"model":"claude-opus-5-5","later_field":1}`))
	if err != nil || !ok {
		t.Fatalf("ParseReport = %v, %v", ok, err)
	}
	if r.Cost().String() != "0.0123" || r.InputTokens != 1200 || r.OutputTokens != 300 || r.Turns != 5 || r.DurationMS != 8656 || r.Model != "claude-opus-5-5" {
		t.Errorf("report = %+v (cost %s)", r, r.Cost())
	}
	for _, blank := range []string{"", "  \n"} {
		if _, ok, err := modelspend.ParseReport([]byte(blank)); ok || err != nil {
			t.Errorf("ParseReport(%q) = %v, %v; want no report, no error", blank, ok, err)
		}
	}
}

func TestParseReportRefusesWhatNoRunReports(t *testing.T) {
	cases := map[string]string{
		`{"cost_usd":-0.01}`:                           "cost_usd must be a number from 0 to 1000",
		`{"cost_usd":1000.5}`:                          "cost_usd must be a number from 0 to 1000",
		`{"cost_usd":1e400}`:                           "is not {cost_usd",
		`{"cost_usd":"NaN"}`:                           "is not {cost_usd",
		`{"cost_usd":NaN}`:                             "is not {cost_usd",
		`{"cost_usd":Infinity}`:                        "is not {cost_usd",
		`{"input_tokens":-1}`:                          "input_tokens must be from 0 to 10000000000",
		`{"input_tokens":10000000001}`:                 "input_tokens must be from 0 to 10000000000",
		`{"output_tokens":1.5}`:                        "is not {cost_usd",
		`{"output_tokens":99999999999999999999}`:       "is not {cost_usd",
		`{"turns":100001}`:                             "turns must be from 0 to 100000",
		`{"duration_ms":604800001}`:                    "duration_ms must be from 0 to 604800000",
		`{"model":"` + strings.Repeat("m", 101) + `"}`: "model must be at most 100 characters",
		`{"model":"<script>"}`:                         "model \"<script>\"",
		`[1,2]`:                                        "must be a JSON object",
		`null`:                                         "must be a JSON object",
		`{"cost_usd":1} {"cost_usd":2}`:                "is not {cost_usd",
	}
	for body, want := range cases {
		_, ok, err := modelspend.ParseReport([]byte(body))
		if err == nil || ok || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseReport(%.60s) = %v, %v; want refused with %q", body, ok, err, want)
		}
	}
}

func TestAReportBindsToItsRunAndSaysItselfOnce(t *testing.T) {
	at := time.Date(2026, 12, 1, 22, 4, 21, 0, time.UTC)
	run := modelspend.NewRun("alice/writer", "website-v2", "tsk_1", "run_1",
		modelspend.Report{CostUSD: 20, InputTokens: 5_000_000, OutputTokens: 10, Turns: 5, DurationMS: 8656, Model: "claude-opus-5-5"}, at)
	e := run.AuditEntry()
	if e.Action != "run_spend" || e.Actor != "alice/writer" || e.Via != "prickle-runner" || e.TaskID != "tsk_1" || e.Project != "website-v2" || e.Key != "runspend#run_1" {
		t.Errorf("audit entry = %+v", e)
	}
	if want := "run run_1: 20 USD, 5000000 input and 10 output tokens, 5 turns, 8.656s, model claude-opus-5-5"; e.Detail != want {
		t.Errorf("detail = %q, want %q", e.Detail, want)
	}
}

func TestPeriods(t *testing.T) {
	at := time.Date(2026, 12, 31, 23, 59, 59, 0, time.FixedZone("CET", 3600))
	if modelspend.Day(at) != "2026-12-31" || modelspend.Month(at) != "2026-12" {
		t.Errorf("Day, Month = %s, %s", modelspend.Day(at), modelspend.Month(at))
	}
	if got := modelspend.NextDay(time.Date(2026, 12, 31, 23, 59, 59, 0, time.UTC)); !got.Equal(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("NextDay = %s", got)
	}
}

func usd(v float64) budget.Micros {
	m, _ := budget.FromUnits(v)
	return m
}

func TestTheCapRule(t *testing.T) {
	c := &modelspend.Cap{Agent: "alice/writer", PerDay: usd(20)}
	day := func(spent float64) modelspend.DayState {
		return modelspend.DayState{Agent: "alice/writer", Day: "2026-12-01", Totals: modelspend.Totals{Cost: usd(spent)}}
	}
	if s := modelspend.StatusOf("alice/writer", nil, day(1e6)); s.Capped || s.Over || s.Ask() {
		t.Errorf("no cap: %+v", s)
	}
	if s := modelspend.StatusOf("alice/writer", c, day(19.99)); s.Over || s.Limit != usd(20) {
		t.Errorf("under the cap: %+v", s)
	}
	reached := modelspend.StatusOf("alice/writer", c, day(20))
	if !reached.Over || !reached.Ask() {
		t.Errorf("at the cap: over and to be asked: %+v", reached)
	}
	asked := day(21.3)
	now := time.Now()
	asked.AskedAt = &now
	if s := modelspend.StatusOf("alice/writer", c, asked); !s.Over || s.Ask() {
		t.Errorf("asked already: over, not asked again: %+v", s)
	}
	// A raise gives another cap's worth on top of the day's spend.
	over := modelspend.StatusOf("alice/writer", c, asked)
	if got := over.RaisedLimit(); got != usd(41.3) {
		t.Errorf("RaisedLimit = %s, want 41.3", got)
	}
	raised := asked
	raised.RaisedTo = over.RaisedLimit()
	if s := modelspend.StatusOf("alice/writer", c, raised); s.Over || s.Limit != usd(41.3) {
		t.Errorf("raised for the day: %+v", s)
	}
	// A standing cap set above the raise wins; one below it does not lower the day's raise.
	if s := modelspend.StatusOf("alice/writer", &modelspend.Cap{PerDay: usd(50)}, raised); s.Limit != usd(50) {
		t.Errorf("a higher cap: limit %s", s.Limit)
	}
	if s := modelspend.StatusOf("alice/writer", &modelspend.Cap{PerDay: usd(5)}, raised); s.Limit != usd(41.3) || s.Over {
		t.Errorf("a lower cap: limit %s", s.Limit)
	}
}

func TestTheMessageSaysTheCapAndTheChoice(t *testing.T) {
	c := &modelspend.Cap{Agent: "alice/writer", PerDay: usd(20)}
	r := modelspend.ReachedOf(modelspend.StatusOf("alice/writer", c,
		modelspend.DayState{Agent: "alice/writer", Day: "2026-12-01", Totals: modelspend.Totals{Cost: usd(21.3)}}))
	if r.Owner != "alice" || r.Headline() != "alice/writer reached 20 USD of model spend today" {
		t.Errorf("reached = %+v, %q", r, r.Headline())
	}
	if q := r.Question(); !strings.Contains(q, "raise the cap for today to 41.3 USD / leave it") || !strings.Contains(q, "21.3 USD spent") {
		t.Errorf("question = %q", q)
	}
}

func TestParseCap(t *testing.T) {
	for in, want := range map[string]string{"20": "20", " 12.5 ": "12.5", "0.01": "0.01", "100000": "100000"} {
		if m, err := modelspend.ParseCap(in); err != nil || m.String() != want {
			t.Errorf("ParseCap(%q) = %s, %v", in, m, err)
		}
	}
	for _, bad := range []string{"0", "0.001", "-5", "100000.01", "NaN", "Inf", "twenty", ""} {
		if _, err := modelspend.ParseCap(bad); err == nil {
			t.Errorf("ParseCap(%q) accepted", bad)
		}
	}
}
