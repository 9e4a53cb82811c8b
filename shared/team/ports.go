// Package team implements the eleven tools agents use to work as one team:
// the rules of who may do what, over small ports that the DynamoDB store
// (and, in unit tests, an in-memory fake) implement. It imports no AWS SDK
// and no MCP: the catalog maps MCP calls onto it.
package team

import (
	"context"
	"errors"
	"time"

	"github.com/useprickle/prickle/shared/pulse"
	"github.com/useprickle/prickle/shared/step"
	"github.com/useprickle/prickle/shared/task"
)

// ErrNotFound is what a store returns for a missing item.
var ErrNotFound = errors.New("not found")

// ErrConflict is what a store returns when a conditional write lost a race:
// the item changed since it was read.
var ErrConflict = errors.New("conflicting write")

// Agent is a member of the directory: an owner's agent and the projects it belongs to.
type Agent struct {
	ID       string   // owner/agent
	Owner    string   // the human who answers for it
	Projects []string // project slugs
}

// Project is a team's room and its settings.
type Project struct {
	Slug string
	Name string
	// OwnerApprovalTypes lists the deliverable types whose accepted results
	// also need the assignee's owner to approve them.
	OwnerApprovalTypes []string
	// StepDeadline is how long a pending step waits for its owner.
	StepDeadline time.Duration
	// PulseStaleAfter is how long a Team Pulse entry counts as current; an
	// agent that has not reported for longer is shown as stale. Zero means
	// DefaultPulseStaleAfter.
	PulseStaleAfter time.Duration
}

// DefaultPulseStaleAfter is the staleness window of Team Pulse unless a project sets its own.
const DefaultPulseStaleAfter = 30 * time.Minute

// StaleAfter is the project's Team Pulse staleness window.
func (p Project) StaleAfter() time.Duration {
	if p.PulseStaleAfter <= 0 {
		return DefaultPulseStaleAfter
	}
	return p.PulseStaleAfter
}

// Directory answers who is who.
type Directory interface {
	Agent(ctx context.Context, id string) (Agent, error)
	Project(ctx context.Context, slug string) (Project, error)
}

// TaskQuery selects a page of a project's tasks, newest first.
type TaskQuery struct {
	Project string
	// Involving, when set, keeps tasks whose assignee or requester (per Role) is this agent.
	Involving string
	Role      string // assignee, requester or any
	States    []task.State
	Limit     int
	Cursor    string // opaque, from the previous page
}

// TaskPage is one page of tasks and the cursor of the next, empty at the end.
type TaskPage struct {
	Tasks      []task.Task
	NextCursor string
}

// Tasks stores tasks and their history. Every write is conditional: a
// lost race comes back as ErrConflict and writes nothing.
type Tasks interface {
	Task(ctx context.Context, id string) (task.Task, error)
	History(ctx context.Context, id string) ([]task.Event, error)
	// CreateTask stores a new task (version 1) with its first history line.
	CreateTask(ctx context.Context, t task.Task, first task.Event) error
	// ApplyMove stores m.Task as version prevVersion+1 and appends m.Event,
	// only if the stored task is still at prevVersion.
	ApplyMove(ctx context.Context, prevVersion int, m task.Move) error
	ListTasks(ctx context.Context, q TaskQuery) (TaskPage, error)
}

// StepWrite is one step to store, only if its stored status is still Prev
// (Prev empty: only if the step does not exist yet).
type StepWrite struct {
	Step step.Step
	Prev step.Status
}

// StepChange is one atomic write of steps and, optionally, the task move they cause.
type StepChange struct {
	Steps       []StepWrite
	Move        *task.Move
	PrevVersion int
}

// Steps stores request_step's steps.
type Steps interface {
	Step(ctx context.Context, taskID, stepID string) (step.Step, error)
	StepsForTask(ctx context.Context, taskID string) ([]step.Step, error)
	SaveSteps(ctx context.Context, c StepChange) error
}

// Pulses stores Team Pulse.
type Pulses interface {
	PutPulse(ctx context.Context, e pulse.Entry) error
	Pulse(ctx context.Context, project string) ([]pulse.Entry, error)
}

// Store is everything the team service needs from storage.
type Store interface {
	Directory
	Tasks
	Steps
	Pulses
}
