package team

import (
	"context"
	"errors"
	"time"

	"github.com/useprickle/prickle/shared/domain/audit"
	"github.com/useprickle/prickle/shared/domain/budget"
	"github.com/useprickle/prickle/shared/domain/grant"
	"github.com/useprickle/prickle/shared/domain/pulse"
	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/domain/task"
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

// Owner is a member of the directory: a human who answers for agents, and
// where approval links reach them.
type Owner struct {
	Name  string
	Email string
	// SlackChannel is where the owner's approval requests are posted: a
	// channel others may read, so it never gets a sign-in link.
	SlackChannel string
	// SlackUserID (U…, or W… on Enterprise Grid) is who may press the Approve
	// and Refuse buttons of this owner's Slack messages, and where sign-in
	// links are sent as a direct message; empty lets nobody decide in Slack
	// and sends sign-in links by email only.
	SlackUserID string
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
	// FileGuard is what a runner does with an edit of a file another agent
	// holds (pulse.Guards); empty means pulse.DefaultGuard.
	FileGuard string
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

// Guard is the project's file guard (pulse.DefaultGuard unless it sets one).
func (p Project) Guard() string {
	if p.FileGuard == "" {
		return pulse.DefaultGuard
	}
	return p.FileGuard
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
	// TaskWithHistory is Task and History in one read (ErrNotFound when
	// there is no task).
	TaskWithHistory(ctx context.Context, id string) (task.Task, []task.Event, error)
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

// StepChange is one atomic write of steps and, optionally, the task move
// they cause. The store appends the audit entry of every step write (see
// audit.ForStep) in the same write, dated At.
type StepChange struct {
	Steps       []StepWrite
	Move        *task.Move
	PrevVersion int
	At          time.Time
	// Spend, if set, is added to the stored spend of its key (agent, day,
	// unit) in the same write, with no limit: an owner's approval of a
	// spending step counts exactly when, and only if, it is stored.
	Spend *budget.Spend
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
	// PutTaskPulse is PutPulse for an entry naming a task (e.TaskID): it
	// stores e only if that task belongs to e.Project, checked in the same
	// write, so update_pulse needs no read of the task. Otherwise nothing is
	// written and ErrConflict comes back.
	PutTaskPulse(ctx context.Context, e pulse.Entry) error
	Pulse(ctx context.Context, project string) ([]pulse.Entry, error)
}

// Grants stores owners' standing grants. A use is counted only while the
// grant is live, so a revocation stops the very next call.
type Grants interface {
	// ProjectGrants lists the project's stored grants, live or not, oldest first.
	ProjectGrants(ctx context.Context, project string) ([]grant.Grant, error)
	// PutGrant stores a new grant; one with its id already stored is ErrConflict.
	PutGrant(ctx context.Context, g grant.Grant) error
	// UseGrant counts one use, only if the grant is unrevoked and unexpired at
	// now (ErrConflict otherwise, ErrNotFound when there is none); once per
	// call, also when the store's client retries it after a lost answer.
	UseGrant(ctx context.Context, project, id string, now time.Time) error
	// RevokeGrant marks the grant revoked by by at now, only if it is not yet
	// revoked (ErrConflict otherwise, ErrNotFound when there is none).
	RevokeGrant(ctx context.Context, project, id, by string, now time.Time) error
}

// Budgets stores owners' spending budgets and what their agents spent.
type Budgets interface {
	// Budget is one owner's budget in a project for a unit (ErrNotFound when unset).
	Budget(ctx context.Context, project, owner, unit string) (budget.Budget, error)
	ProjectBudgets(ctx context.Context, project string) ([]budget.Budget, error)
	PutBudget(ctx context.Context, b budget.Budget) error
	// AddSpend adds amount (negative to give back) to the spend key names,
	// only if the total stays at or below limit when limit is set
	// (ErrConflict otherwise, with nothing written); it returns the new total.
	// Each call adds once, also when the store's client retries it after a
	// lost answer (a debit that landed at the limit is not read as over it).
	AddSpend(ctx context.Context, key budget.Spend, amount budget.Micros, limit *budget.Micros) (budget.Micros, error)
	// Spent is what key's agent spent on key's day in key's unit (0 when nothing).
	Spent(ctx context.Context, key budget.Spend) (budget.Micros, error)
	// ProjectSpend lists every agent's spend in the project on a day.
	ProjectSpend(ctx context.Context, project, day string) ([]budget.Spend, error)
}

// AuditLog is a project's trail: appended to, never changed.
type AuditLog interface {
	// AppendAudit stores new entries; an entry already stored is never overwritten.
	AppendAudit(ctx context.Context, entries ...audit.Entry) error
	// ProjectAudit lists the project's entries in time order.
	ProjectAudit(ctx context.Context, project string) ([]audit.Entry, error)
}

// Store is everything the team service needs from storage.
type Store interface {
	Directory
	Tasks
	Steps
	Pulses
	Grants
	Budgets
	AuditLog
}

// ErrThrottled is what a store returns when the database refused a request
// for throughput (throttled, or a transaction cancelled for it): nothing was
// written, and the same call can succeed a moment later.
var ErrThrottled = errors.New("the database is throttling requests")

// ErrUnavailable is what a store returns when the database did not answer
// (a server error, a timeout, a lost connection) even after its retries: a
// temporary failure whose write may or may not have landed.
var ErrUnavailable = errors.New("the database did not answer")
