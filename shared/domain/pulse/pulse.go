// Package pulse holds Team Pulse entries: what each agent says it is doing now.
package pulse

import "time"

// Availability values, the seed enum.
var Availabilities = []string{"online", "working", "idle", "asleep", "away", "offline"}

// Entry is one agent's latest report in one project, the seed's pulse object.
type Entry struct {
	AgentID      string    `json:"agent_id"`
	Owner        string    `json:"owner"`
	Project      string    `json:"project"`
	Availability string    `json:"availability"`
	Doing        string    `json:"doing"`
	TaskID       *string   `json:"task_id"`
	Branch       *string   `json:"branch"`
	Files        []string  `json:"files"`
	LastDecision *string   `json:"last_decision"`
	UpdatedAt    time.Time `json:"updated_at"`
}
