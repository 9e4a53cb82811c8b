package modelspend

import (
	"fmt"
	"strings"
	"time"

	"github.com/useprickle/prickle/shared/domain/budget"
)

// MaxCapUSD is the largest daily cap an owner may set.
const MaxCapUSD = 100_000

// Cap is an owner's daily model-spend cap for one of their agents: once the
// agent's runs of a UTC day have reported this much, no new run of the
// agent starts that day unless the owner raises it for the day.
type Cap struct {
	Agent  string        `json:"agent"`
	PerDay budget.Micros `json:"per_day"`
	SetBy  string        `json:"set_by"`
	SetAt  time.Time     `json:"set_at"`
}

// ParseCap reads a cap in USD as an owner types it ("20", "12.5"); it is
// more than 0 and at most MaxCapUSD.
func ParseCap(s string) (budget.Micros, error) {
	m, err := budget.Parse(s)
	if err != nil {
		return 0, fmt.Errorf("a cap is an amount in %s, from 0.01 to %d: %w", Unit, MaxCapUSD, err)
	}
	if m < budget.Scale/100 || m > MaxCapUSD*budget.Scale {
		return 0, fmt.Errorf("a cap is from 0.01 to %d %s a day", MaxCapUSD, Unit)
	}
	return m, nil
}

// Decisions an owner makes on a cap reached.
const (
	Raised = "raised"
	Left   = "left"
)

// DayState is an agent's UTC day: what its runs used, whether its owner was
// asked about the cap (once a day), and what the owner decided.
type DayState struct {
	Agent string `json:"agent"`
	Day   string `json:"day"`
	Totals
	AskedAt *time.Time `json:"asked_at,omitempty"`
	// RaisedTo is the day's cap the owner raised it to (0: not raised).
	RaisedTo  budget.Micros `json:"raised_to,omitempty"`
	Decision  string        `json:"decision,omitempty"`
	DecidedBy string        `json:"decided_by,omitempty"`
	DecidedAt *time.Time    `json:"decided_at,omitempty"`
}

// Status is an agent's cap as it stands on a day: no cap, under it, or
// reached (Over), when no new run of the agent starts.
type Status struct {
	Agent  string
	Capped bool
	Cap    Cap
	Day    DayState
	// Limit is the day's cap: the cap, or what the owner raised it to today.
	Limit budget.Micros
	Over  bool
}

// StatusOf applies the rule: with a cap, the day's limit is the larger of
// the cap and what the owner raised it to today, and the agent is over once
// the day's spend reaches it.
func StatusOf(agent string, c *Cap, d DayState) Status {
	s := Status{Agent: agent, Day: d}
	if c == nil {
		return s
	}
	s.Capped, s.Cap = true, *c
	s.Limit = max(c.PerDay, d.RaisedTo)
	s.Over = d.Cost >= s.Limit
	return s
}

// Ask says whether the owner is to be asked now: over the cap, and not yet
// asked today (the store makes "once" hold with a conditional write).
func (s Status) Ask() bool { return s.Over && s.Day.AskedAt == nil }

// RaisedLimit is the day's cap a raise sets: another cap's worth on top of
// the day's spend (or of the day's limit, if the spend is below it).
func (s Status) RaisedLimit() budget.Micros {
	return max(s.Limit, s.Day.Cost) + s.Cap.PerDay
}

// Reached is what the owner is told when an agent's day reached its cap.
type Reached struct {
	Agent string        `json:"agent"`
	Owner string        `json:"owner"`
	Day   string        `json:"day"`
	Spent budget.Micros `json:"spent"`
	Limit budget.Micros `json:"limit"`
	// Raise is the day's cap a raise would set.
	Raise budget.Micros `json:"raise"`
}

// ReachedOf is the message of a status that is over its cap.
func ReachedOf(s Status) Reached {
	owner, _, _ := strings.Cut(s.Agent, "/")
	return Reached{Agent: s.Agent, Owner: owner, Day: s.Day.Day, Spent: s.Day.Cost, Limit: s.Limit, Raise: s.RaisedLimit()}
}

// Headline is the message's first line: "alice/writer reached 20 USD of model spend today".
func (r Reached) Headline() string {
	return fmt.Sprintf("%s reached %s %s of model spend today", r.Agent, r.Limit, Unit)
}

// Question is the whole ask, as the email and Slack say it.
func (r Reached) Question() string {
	return fmt.Sprintf("%s (%s UTC: %s %s spent); raise the cap for today to %s %s / leave it. Until you raise it, no new run of %s starts today: its wake-ups wait, and nothing is lost. Left as it is, they run from 00:00 UTC.",
		r.Headline(), r.Day, r.Spent, Unit, r.Raise, Unit, r.Agent)
}
