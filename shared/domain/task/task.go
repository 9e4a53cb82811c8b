package task

import "time"

// State is where a task stands in its lifecycle; the values are the seed enum.
type State string

// The task states, in lifecycle order.
const (
	Requested State = "requested"
	Routed    State = "routed"
	Accepted  State = "accepted"
	Working   State = "working"
	Waiting   State = "waiting"
	Verifying State = "verifying"
	Approval  State = "approval"
	Completed State = "completed"
	Rejected  State = "rejected"
	Cancelled State = "cancelled"
)

// States lists every state so callers can validate filters and build boards.
var States = []State{Requested, Routed, Accepted, Working, Waiting, Verifying, Approval, Completed, Rejected, Cancelled}

// Open reports whether the task can still move (it is not finished).
func (s State) Open() bool {
	return s != Completed && s != Rejected && s != Cancelled
}

// WaitingOn values say who a waiting task needs.
const (
	WaitingOnOwnerApproval = "owner_approval"
	WaitingOnHuman         = "human"
	WaitingOnAgent         = "agent"
)

// Task is the seed's task object plus the bookkeeping the store needs.
type Task struct {
	ID               string      `json:"id"`
	Project          string      `json:"project"`
	State            State       `json:"state"`
	WaitingOn        *string     `json:"waiting_on"`
	Requester        string      `json:"requester"`
	Assignee         string      `json:"assignee"`
	Packet           Packet      `json:"packet"`
	Result           *Result     `json:"result"`
	LatestCheckpoint *Checkpoint `json:"latest_checkpoint"`
	CreatedAt        time.Time   `json:"created_at"`
	UpdatedAt        time.Time   `json:"updated_at"`
	// Version counts writes; every update is conditional on it so racing
	// transitions cannot both land.
	Version int `json:"-"`
}

// Packet is what the requester hands over: the work, its type and how it will be judged.
type Packet struct {
	Task               string   `json:"task"`
	DeliverableType    string   `json:"deliverable_type"`
	AcceptanceCriteria []string `json:"acceptance_criteria"`
	Context            string   `json:"context"`
	Files              []string `json:"files"`
	DependsOn          []string `json:"depends_on"`
}

// Checkpoint is the assignee's latest account of progress, so work survives a lost run.
type Checkpoint struct {
	Progress      string   `json:"progress"`
	Decisions     []string `json:"decisions"`
	FilesTouched  []string `json:"files_touched"`
	NextSteps     []string `json:"next_steps"`
	OpenQuestions []string `json:"open_questions"`
}

// Result is what the assignee returns, with the evidence that backs it.
type Result struct {
	Summary    string     `json:"summary"`
	Evidence   []Evidence `json:"evidence"`
	Provenance string     `json:"provenance"`
	ReturnedBy string     `json:"returned_by"`
	ReturnedAt time.Time  `json:"returned_at"`
}

// ResultRound names the result a task holds now, by when it was returned;
// an owner's approval link is bound to it, so it cannot decide a later one.
func ResultRound(t Task) string {
	if t.Result == nil {
		return ""
	}
	return t.Result.ReturnedAt.UTC().Format(time.RFC3339Nano)
}

// Evidence is one item that lets the requester check a result without rerunning it.
type Evidence struct {
	Kind    string `json:"kind"`
	Summary string `json:"summary"`
	URL     string `json:"url,omitempty"`
	Content string `json:"content,omitempty"`
}

// Event is one line of a task's history: who moved it, when, from where to where.
type Event struct {
	Seq    int       `json:"-"`
	At     time.Time `json:"at"`
	By     string    `json:"by"`
	Action string    `json:"action"`
	From   *State    `json:"from"`
	To     State     `json:"to"`
	Note   *string   `json:"note"`
}

// The roles a caller holds on a task, as tools and task queries name them;
// RoleAny is either.
const (
	RoleAssignee  = "assignee"
	RoleRequester = "requester"
	RoleAny       = "any"
)

// The history actions other parts react to: the events a move stands for
// are decided by these (see event.ForMove).
const (
	ActionHandOff      = "hand_off"
	ActionRoute        = "route"
	ActionReturnResult = "return_result"
	ActionReviewAccept = "review_accept"
	ActionOwnerApprove = "owner_approve"
	ActionOwnerRefuse  = "owner_refuse"
	// The moves owners' steps cause (see AskOwner, StepDecided, StepExpired).
	ActionStepRequested = "step_requested"
	ActionStepDecided   = "step_decided"
	ActionStepExpired   = "step_expired"
)
