package modelspend

import (
	"fmt"
	"time"

	"github.com/useprickle/prickle/shared/domain/audit"
	"github.com/useprickle/prickle/shared/domain/budget"
)

// Unit is the unit of every model-spend amount.
const Unit = "USD"

// Run is one run's reported use, bound to the run token that reported it:
// its agent, task and run come from the token, never from the report.
type Run struct {
	Agent   string        `json:"agent"`
	Project string        `json:"project"`
	TaskID  string        `json:"task_id"`
	RunID   string        `json:"run_id"`
	Cost    budget.Micros `json:"cost"`
	Report
	At time.Time `json:"at"`
}

// NewRun binds a checked report to its run at at.
func NewRun(agent, project, taskID, runID string, r Report, at time.Time) Run {
	return Run{Agent: agent, Project: project, TaskID: taskID, RunID: runID, Cost: r.Cost(), Report: r, At: at.UTC()}
}

// Totals is what an agent's runs used in one period (a UTC day or month).
type Totals struct {
	Cost         budget.Micros `json:"cost"`
	InputTokens  int64         `json:"input_tokens"`
	OutputTokens int64         `json:"output_tokens"`
	Runs         int64         `json:"runs"`
}

// Day is the UTC day a run counts against, "2026-12-01" (as budgets count days).
func Day(t time.Time) string { return budget.Day(t) }

// Month is the UTC month a run counts against, "2026-12".
func Month(t time.Time) string { return t.UTC().Format("2006-01") }

// NextDay is when the UTC day of t ends: a cap left as it is lifts then,
// and the link asking about it expires.
func NextDay(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d+1, 0, 0, 0, 0, time.UTC)
}

// Retention is how long an agent's day and month counters are kept after
// their period (their TTL): the owners page shows this month and today.
const (
	DayRetention   = 40 * 24 * time.Hour
	MonthRetention = 400 * 24 * time.Hour
)

// Describe says what the run used, for the audit trail and the task page.
func (r Run) Describe() string {
	s := fmt.Sprintf("run %s: %s %s, %d input and %d output tokens, %d turns, %s", r.RunID, r.Cost, Unit,
		r.InputTokens, r.OutputTokens, r.Turns, (time.Duration(r.DurationMS) * time.Millisecond).Round(time.Millisecond))
	if r.Model != "" {
		s += ", model " + r.Model
	}
	return s
}

// AuditEntry is the line of the project's audit trail for the run's spend:
// one per run, so a report sent twice leaves one line.
func (r Run) AuditEntry() audit.Entry {
	return audit.Entry{At: r.At, Project: r.Project, Action: audit.RunSpend, Actor: r.Agent, Via: audit.ViaRunner,
		TaskID: r.TaskID, Detail: r.Describe(), Key: "runspend#" + r.RunID}
}

// AgentSpend is an agent's cap, day and month as one read finds them.
type AgentSpend struct {
	Agent string
	Cap   *Cap
	Today DayState
	Month Totals
}

// Status is the agent's cap as it stands today.
func (a AgentSpend) Status() Status { return StatusOf(a.Agent, a.Cap, a.Today) }
