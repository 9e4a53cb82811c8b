// Package event names what happens in Prickle that other parts react to:
// a task routed, a result returned, a step requested or decided. The team
// service publishes them after its write is stored; the bus (EventBridge in
// the cloud, an in-process bus locally) delivers them to notify, wake and
// route as template.yaml's rules say. Pure: no AWS.
package event

import (
	"context"
	"strconv"
	"time"

	"github.com/useprickle/prickle/shared/domain/modelspend"
	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/domain/task"
)

// Source is the EventBridge source of every Prickle event.
const Source = "prickle"

// Type is an event's EventBridge detail-type.
type Type string

// The events of the design, plus Approval Requested (a result waits for its owner).
const (
	TaskRouted        Type = "Task Routed"
	ResultReturned    Type = "Result Returned"
	TaskCompleted     Type = "Task Completed"
	ApprovalRequested Type = "Approval Requested"
	ResultDecided     Type = "Result Decided"
	StepRequested     Type = "Step Requested"
	StepDecided       Type = "Step Decided"
	StepExpired       Type = "Step Expired"
	// SignInRequested asks notify to send an owner a sign-in link, so only
	// notify holds the rights to send email.
	SignInRequested Type = "Sign-in Requested"
	// ModelCapReached asks an agent's owner, once a day, whether to raise the
	// agent's daily model-spend cap it reached (notify sends it).
	ModelCapReached Type = "Model Cap Reached"
)

// Types lists every event type, for rules and tests.
var Types = []Type{TaskRouted, ResultReturned, TaskCompleted, ApprovalRequested, ResultDecided, StepRequested, StepDecided, StepExpired, SignInRequested, ModelCapReached}

// Event is one thing that happened, with the state it left behind. Its ID
// is deterministic (type + subject + version), so a retried publish carries
// the same ID and each target acts on it once.
type Event struct {
	ID      string     `json:"id"`
	Type    Type       `json:"type"`
	At      time.Time  `json:"at"`
	Project string     `json:"project"`
	TaskID  string     `json:"task_id"`
	Actor   string     `json:"actor"`
	Task    *task.Task `json:"task,omitempty"`
	Step    *step.Step `json:"step,omitempty"`
	// TaskVersion is the task's version after the change, part of the ID.
	TaskVersion int `json:"task_version,omitempty"`
	// Owner is who a Sign-in Requested event is for; it carries no link,
	// which notify mints itself, so no credential travels on the bus.
	Owner string `json:"owner,omitempty"`
	// Cap is what a Model Cap Reached event tells the owner; its link is
	// minted by notify, like a sign-in link.
	Cap *modelspend.Reached `json:"cap,omitempty"`
}

// Publisher sends events to whoever the rules say; it retries until every
// event is accepted or the context ends.
type Publisher interface {
	Publish(ctx context.Context, events ...Event) error
}

// Handler reacts to one event; it must be safe to call twice with the same event.
type Handler func(ctx context.Context, e Event) error

// Discard is a Publisher that drops everything: for tools run where no one listens.
type Discard struct{}

// Publish drops the events.
func (Discard) Publish(context.Context, ...Event) error { return nil }

// ForTask builds the event of a task change; the ID names the task version it describes.
func ForTask(typ Type, t task.Task, actor string, at time.Time) Event {
	tc := t
	return Event{
		ID: string(typ) + ":" + t.ID + ":" + strconv.Itoa(t.Version), Type: typ, At: at,
		Project: t.Project, TaskID: t.ID, Actor: actor, Task: &tc, TaskVersion: t.Version,
	}
}

// ForMove is every event a stored task move stands for, built from the
// task after the move (its Version set) and the move's history line alone,
// so the writer and the tasks table's stream (the outbox that republishes
// what a crashed writer never published) build the same events with the
// same IDs, and every target acts on each once. Moves no one reacts to
// (accept, checkpoint, decline, cancel, rework, steps) stand for none.
func ForMove(t task.Task, line task.Event) []Event {
	switch {
	case line.Action == task.ActionHandOff && line.To == task.Routed, line.Action == task.ActionRoute:
		return []Event{ForTask(TaskRouted, t, line.By, line.At)}
	case line.Action == task.ActionReturnResult:
		return []Event{ForTask(ResultReturned, t, line.By, line.At)}
	case line.Action == task.ActionReviewAccept && line.To == task.Approval:
		return []Event{ForTask(ApprovalRequested, t, line.By, line.At)}
	case line.Action == task.ActionReviewAccept && line.To == task.Completed:
		return []Event{ForTask(TaskCompleted, t, line.By, line.At)}
	case line.Action == task.ActionOwnerApprove && line.To == task.Completed:
		return []Event{ForTask(ResultDecided, t, line.By, line.At), ForTask(TaskCompleted, t, line.By, line.At)}
	case line.Action == task.ActionOwnerApprove, line.Action == task.ActionOwnerRefuse:
		return []Event{ForTask(ResultDecided, t, line.By, line.At)}
	}
	return nil
}

// ForSignIn builds the request for an owner's sign-in link; every request is its own event.
func ForSignIn(owner, nonce string, at time.Time) Event {
	return Event{ID: string(SignInRequested) + ":" + owner + ":" + nonce, Type: SignInRequested, At: at, Actor: "owner:" + owner, Owner: owner}
}

// ForStep builds the event of a step change; the ID names the step and its status.
func ForStep(typ Type, s step.Step, actor string, at time.Time) Event {
	sc := s
	return Event{
		ID: string(typ) + ":" + s.TaskID + ":" + s.ID + ":" + string(s.Status), Type: typ, At: at,
		Project: s.Project, TaskID: s.TaskID, Actor: actor, Step: &sc,
	}
}

// ForCapReached builds the ask of an agent's cap reached on its day; the ID
// names the agent and the day, so the owner is asked once a day.
func ForCapReached(r modelspend.Reached, at time.Time) Event {
	rc := r
	return Event{ID: string(ModelCapReached) + ":" + r.Agent + ":" + r.Day, Type: ModelCapReached, At: at,
		Actor: r.Agent, Owner: r.Owner, Cap: &rc}
}
