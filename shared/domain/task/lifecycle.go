package task

import (
	"fmt"
	"strings"
	"time"
)

// Move is a checked transition: the task as it will be stored and the history
// line that records it.
type Move struct {
	Task  Task
	Event Event
}

// move applies a transition after the caller has checked who and from where.
func move(t Task, by, action string, to State, waitingOn *string, note string, now time.Time) Move {
	from := t.State
	next := t
	next.State = to
	next.WaitingOn = waitingOn
	next.UpdatedAt = now
	var n *string
	if note != "" {
		n = &note
	}
	return Move{Task: next, Event: Event{At: now, By: by, Action: action, From: &from, To: to, Note: n}}
}

// CheckHandOff is the self rule of a new task: an agent may not hand a task
// to itself, because the requester reviews what the assignee returns and no
// agent accepts its own result. Another agent of the same owner is fine.
func CheckHandOff(requester, assignee string) error {
	if requester == assignee {
		return Refusef("%s may not hand a task to itself: the requester reviews the assignee's result, and no agent accepts its own result; hand it to another agent of the project", requester)
	}
	return nil
}

// requireState refuses unless the task is in one of the allowed states, naming
// the current state and what the tool would accept.
func requireState(t Task, tool string, allowed ...State) error {
	for _, s := range allowed {
		if t.State == s {
			return nil
		}
	}
	names := make([]string, len(allowed))
	for i, s := range allowed {
		names[i] = string(s)
	}
	return Refusef("task %s is %s; %s needs %s", t.ID, t.State, tool, joinOr(names))
}

// requireRole refuses unless the caller holds the role the tool needs.
func requireRole(t Task, tool, caller, role string) error {
	holder := t.Assignee
	if role == RoleRequester {
		holder = t.Requester
	}
	if caller != holder {
		return Refusef("%s on task %s is for its %s (%s); you are %s, and the task is %s", tool, t.ID, role, holder, caller, t.State)
	}
	return nil
}

func joinOr(items []string) string {
	switch len(items) {
	case 0:
		return "nothing"
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}

// Accept moves a routed task to accepted; only its assignee may.
func Accept(t Task, caller, note string, now time.Time) (Move, error) {
	if err := requireRole(t, "accept_task", caller, RoleAssignee); err != nil {
		return Move{}, err
	}
	if err := requireState(t, "accept_task", Routed); err != nil {
		return Move{}, err
	}
	return move(t, caller, "accept", Accepted, nil, note, now), nil
}

// Decline moves a routed or accepted task to rejected; only its assignee may.
func Decline(t Task, caller, reason string, now time.Time) (Move, error) {
	if err := requireRole(t, "decline_task", caller, RoleAssignee); err != nil {
		return Move{}, err
	}
	if err := requireState(t, "decline_task", Routed, Accepted); err != nil {
		return Move{}, err
	}
	return move(t, caller, "decline", Rejected, nil, reason, now), nil
}

// SaveCheckpoint records progress and moves the task to working, or to
// waiting when the assignee says it needs a human or another agent. A task
// waiting on its owner's approval keeps waiting on it: request_step tells a
// run to checkpoint and end its turn, and only the owner's decision (or the
// step's expiry) puts the task back to work.
func SaveCheckpoint(t Task, caller string, cp Checkpoint, waitingOn string, now time.Time) (Move, error) {
	if err := requireRole(t, "save_checkpoint", caller, RoleAssignee); err != nil {
		return Move{}, err
	}
	if err := requireState(t, "save_checkpoint", Accepted, Working, Waiting); err != nil {
		return Move{}, err
	}
	if waitingOn != "" && waitingOn != WaitingOnHuman && waitingOn != WaitingOnAgent {
		return Move{}, Refusef("waiting_on %q is not one a checkpoint may set; use human or agent, or leave it out", waitingOn)
	}
	to, wait := Working, (*string)(nil)
	if waitingOn != "" {
		to, wait = Waiting, &waitingOn
	}
	if t.WaitingOnOwner() {
		to, wait = Waiting, t.WaitingOn
	}
	m := move(t, caller, "checkpoint", to, wait, cp.Progress, now)
	m.Task.LatestCheckpoint = &cp
	return m, nil
}

// ReturnResult attaches a checked result and hands the task to its requester for review.
func ReturnResult(t Task, caller string, r Result, now time.Time) (Move, error) {
	if err := requireRole(t, "return_result", caller, RoleAssignee); err != nil {
		return Move{}, err
	}
	if err := requireState(t, "return_result", Accepted, Working, Waiting); err != nil {
		return Move{}, err
	}
	if err := CheckResult(t.Packet.DeliverableType, r); err != nil {
		return Move{}, err
	}
	r.ReturnedBy = caller
	r.ReturnedAt = now
	m := move(t, caller, ActionReturnResult, Verifying, nil, r.Summary, now)
	m.Task.Result = &r
	return m, nil
}

// Verdicts a requester can give a returned result.
const (
	VerdictAccept = "accept"
	VerdictRework = "rework"
	VerdictReject = "reject"
)

// Review applies the requester's verdict. An accepted result completes the
// task, or goes to owner approval when the project requires it for this
// deliverable type; a caller who returned the result (a task from before
// CheckHandOff, with the same requester and assignee) cannot accept it.
func Review(t Task, caller, verdict, feedback string, needsOwnerApproval bool, now time.Time) (Move, error) {
	if err := requireRole(t, "review_result", caller, RoleRequester); err != nil {
		return Move{}, err
	}
	if err := requireState(t, "review_result", Verifying); err != nil {
		return Move{}, err
	}
	switch verdict {
	case VerdictAccept:
		if (t.Result != nil && t.Result.ReturnedBy == caller) || t.Assignee == caller {
			return Move{}, Refusef("%s returned the result of task %s and may not accept it: no agent accepts its own result; review it with rework or reject, or cancel the task", caller, t.ID)
		}
		if needsOwnerApproval {
			wait := WaitingOnOwnerApproval
			return move(t, caller, ActionReviewAccept, Approval, &wait, feedback, now), nil
		}
		return move(t, caller, ActionReviewAccept, Completed, nil, feedback, now), nil
	case VerdictRework, VerdictReject:
		if strings.TrimSpace(feedback) == "" {
			return Move{}, Refusef("review_result with verdict %s needs feedback saying what to change", verdict)
		}
		if verdict == VerdictRework {
			return move(t, caller, "review_rework", Working, nil, feedback, now), nil
		}
		return move(t, caller, "review_reject", Rejected, nil, feedback, now), nil
	}
	return Move{}, Refusef("verdict %q is not one of accept, rework or reject", verdict)
}

// DecideApproval applies the owner's decision on an accepted result that
// waits in approval; only the assignee's owner (the owner part of
// owner/agent) may decide. Approval completes the task and marks the result
// owner_approved; refusal sends it back to working with the owner's message.
func DecideApproval(t Task, owner string, approve bool, message string, now time.Time) (Move, error) {
	if holder, _, _ := strings.Cut(t.Assignee, "/"); owner != holder {
		return Move{}, Refusef("the result of task %s is for %s, the owner of %s, to approve; you are %s", t.ID, holder, t.Assignee, owner)
	}
	if err := requireState(t, "owner approval", Approval); err != nil {
		return Move{}, err
	}
	if !approve {
		return move(t, "owner:"+owner, ActionOwnerRefuse, Working, nil, message, now), nil
	}
	m := move(t, "owner:"+owner, ActionOwnerApprove, Completed, nil, message, now)
	if m.Task.Result != nil {
		r := *m.Task.Result
		r.Provenance = ProvenanceOwnerApproved
		m.Task.Result = &r
	}
	return m, nil
}

// Cancel ends any open task; only its requester may.
func Cancel(t Task, caller, reason string, now time.Time) (Move, error) {
	if err := requireRole(t, "cancel_task", caller, RoleRequester); err != nil {
		return Move{}, err
	}
	if !t.State.Open() {
		return Move{}, Refusef("task %s is %s; cancel_task needs an open state (requested, routed, accepted, working, waiting, verifying or approval)", t.ID, t.State)
	}
	return move(t, caller, "cancel", Cancelled, nil, reason, now), nil
}

// Route moves a requested task whose dependencies are all complete to routed.
func Route(t Task, now time.Time) (Move, error) {
	if err := requireState(t, "routing", Requested); err != nil {
		return Move{}, err
	}
	return move(t, System, ActionRoute, Routed, nil, "", now), nil
}

// System names Prickle itself as the actor of automatic transitions.
const System = "prickle"

// WaitingOnOwner reports whether t waits on its owner's decision on a step
// its run asked (waiting, on owner_approval): only that decision or the
// step's expiry puts it back to work.
func (t Task) WaitingOnOwner() bool {
	return t.State == Waiting && t.WaitingOn != nil && *t.WaitingOn == WaitingOnOwnerApproval
}

// CheckAsk is who may ask a step and from where: the assignee, while the
// task is accepted, working or waiting. request_step checks it before
// anything else, and AskOwner again.
func CheckAsk(t Task, caller string) error {
	if err := requireRole(t, "request_step", caller, RoleAssignee); err != nil {
		return err
	}
	return requireState(t, "request_step", Accepted, Working, Waiting)
}

// AskOwner moves a task to waiting on its owner: its assignee's run asked
// step stepID (a call of toolName) of the owner.
func AskOwner(t Task, caller, toolName, stepID string, now time.Time) (Move, error) {
	if err := CheckAsk(t, caller); err != nil {
		return Move{}, err
	}
	wait := WaitingOnOwnerApproval
	return move(t, caller, ActionStepRequested, Waiting, &wait, fmt.Sprintf("asked owner: %s %s", toolName, stepID), now), nil
}

// StepDecided is what the owner's decision (approved or refused) on step
// stepID does to its task: a task waiting on its owner goes back to working;
// another open task does not move (nil); a closed task refuses, since its
// steps no longer need a decision.
func StepDecided(t Task, owner, decision, stepID string, now time.Time) (*Move, error) {
	if !t.State.Open() {
		return nil, Refusef("task %s is %s; its steps no longer need a decision", t.ID, t.State)
	}
	if !t.WaitingOnOwner() {
		return nil, nil
	}
	m := move(t, "owner:"+owner, ActionStepDecided, Working, nil, fmt.Sprintf("owner %s %s %s", owner, decision, stepID), now)
	return &m, nil
}

// StepExpired is what the expiry of step stepID without a decision does to
// its task: a task waiting on its owner goes back to working, unless another
// of its steps still waits (othersPending); otherwise nothing moves (nil).
func StepExpired(t Task, stepID string, othersPending bool, now time.Time) *Move {
	if !t.WaitingOnOwner() || othersPending {
		return nil
	}
	m := move(t, System, ActionStepExpired, Working, nil, fmt.Sprintf("step %s expired without a decision", stepID), now)
	return &m
}
