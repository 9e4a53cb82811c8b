// Package modelspend counts what agents' runs spend on their models and
// caps it: a runner reports each run's usage as its agent CLI reported it
// (Report), Prickle keeps the run (Run) and adds it to the agent's day and
// month (Totals), and an owner's daily cap per agent (Cap) stops new runs
// once the day's spend reaches it, until the owner raises it for the day
// or the next UTC day comes (Day, Status). Amounts are budget.Micros of USD,
// so counters add up exactly. It is pure: no AWS, no HTTP.
package modelspend

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"

	"github.com/useprickle/prickle/shared/domain/budget"
)

// Bounds of a report: far above any real run, so a number beyond one is a
// mistake or an attack, never a run.
const (
	// MaxRunCostUSD is the most one run may say it cost.
	MaxRunCostUSD = 1000
	// MaxTokens bounds each token count of one run.
	MaxTokens = 10_000_000_000
	// MaxTurns bounds the turns of one run.
	MaxTurns = 100_000
	// MaxDurationMS is a week in milliseconds.
	MaxDurationMS = 7 * 24 * 3600 * 1000
	// MaxModel bounds the model's name, in characters.
	MaxModel = 100
)

// Report is what a runner says one run used, as its agent CLI reported it:
// POST /runner/ended's optional JSON body. Fields it does not know are
// ignored, so a newer runner's report still counts.
type Report struct {
	CostUSD      float64 `json:"cost_usd"`
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	Turns        int64   `json:"turns"`
	DurationMS   int64   `json:"duration_ms"`
	Model        string  `json:"model,omitempty"`
}

// modelPattern is what a model's name may be: what the agent CLIs name
// their models with (claude-opus-5-5, gpt-5.1-codex, us.anthropic.claude…:0).
var modelPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/@\[\]-]*$`)

// ParseReport reads a report from a request body; empty (or blank) is no
// report (ok false). A body that is not one JSON object of these fields,
// or a number that is negative, not finite or beyond its bound, is refused
// with the bound it broke.
func ParseReport(body []byte) (r Report, ok bool, err error) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return Report{}, false, nil
	}
	if body[0] != '{' {
		return Report{}, false, fmt.Errorf("the usage report must be a JSON object {cost_usd, input_tokens, output_tokens, turns, duration_ms, model}")
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return Report{}, false, fmt.Errorf("the usage report is not {cost_usd: number, input_tokens, output_tokens, turns, duration_ms: whole numbers, model: string}: %w", err)
	}
	if err := r.Check(); err != nil {
		return Report{}, false, err
	}
	return r, true, nil
}

// Check refuses a report out of bounds, naming the bound.
func (r Report) Check() error {
	switch {
	case math.IsNaN(r.CostUSD) || math.IsInf(r.CostUSD, 0) || r.CostUSD < 0 || r.CostUSD > MaxRunCostUSD:
		return fmt.Errorf("cost_usd must be a number from 0 to %d, got %v", MaxRunCostUSD, r.CostUSD)
	case r.InputTokens < 0 || r.InputTokens > MaxTokens:
		return fmt.Errorf("input_tokens must be from 0 to %d, got %d", int64(MaxTokens), r.InputTokens)
	case r.OutputTokens < 0 || r.OutputTokens > MaxTokens:
		return fmt.Errorf("output_tokens must be from 0 to %d, got %d", int64(MaxTokens), r.OutputTokens)
	case r.Turns < 0 || r.Turns > MaxTurns:
		return fmt.Errorf("turns must be from 0 to %d, got %d", MaxTurns, r.Turns)
	case r.DurationMS < 0 || r.DurationMS > MaxDurationMS:
		return fmt.Errorf("duration_ms must be from 0 to %d (a week), got %d", MaxDurationMS, r.DurationMS)
	case len([]rune(r.Model)) > MaxModel:
		return fmt.Errorf("model must be at most %d characters", MaxModel)
	case r.Model != "" && !modelPattern.MatchString(r.Model):
		return fmt.Errorf("model %.40q: letters, digits and . _ : / @ [ ] -", r.Model)
	}
	return nil
}

// Cost is the report's cost in millionths of a USD, rounded to the nearest.
func (r Report) Cost() budget.Micros {
	m, _ := budget.FromUnits(r.CostUSD) // within bounds once checked
	return m
}
