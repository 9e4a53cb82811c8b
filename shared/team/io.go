package team

import (
	"encoding/json"

	"github.com/useprickle/prickle/shared/domain/pulse"
	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/domain/task"
)

// The tool inputs and outputs below mirror the JSON schemas in
// shared/mcp/catalog/schemas field for field; the catalog decodes validated
// arguments into them and encodes the outputs as structuredContent.

// ReadRoomInput asks for Team Pulse and the caller's tasks in a project.
type ReadRoomInput struct {
	Project string       `json:"project"`
	Role    string       `json:"role"`
	States  []task.State `json:"states"`
	Limit   int          `json:"limit"`
	Cursor  string       `json:"cursor"`
}

// ReadRoomOutput is the room: who is doing what, and the caller's tasks.
type ReadRoomOutput struct {
	Project    string        `json:"project"`
	Pulse      []pulse.Entry `json:"pulse"`
	Tasks      []task.Task   `json:"tasks"`
	NextCursor *string       `json:"next_cursor"`
}

// GetTaskInput names one task.
type GetTaskInput struct {
	TaskID string `json:"task_id"`
}

// GetTaskOutput is a task with its history, oldest first.
type GetTaskOutput struct {
	Task    task.Task    `json:"task"`
	History []task.Event `json:"history"`
}

// HandOffInput creates a task for an assignee.
type HandOffInput struct {
	Project  string      `json:"project"`
	Assignee string      `json:"assignee"`
	Packet   task.Packet `json:"packet"`
}

// TaskOutput is what every task-moving tool returns.
type TaskOutput struct {
	Task task.Task `json:"task"`
}

// AcceptInput takes a routed task.
type AcceptInput struct {
	TaskID string `json:"task_id"`
	Note   string `json:"note"`
}

// DeclineInput refuses a task, saying why.
type DeclineInput struct {
	TaskID string `json:"task_id"`
	Reason string `json:"reason"`
}

// CheckpointInput is save_checkpoint's input (shared/mcp/catalog/schemas/save_checkpoint.input.json): the checkpoint plus what the task waits on, if anything.
type CheckpointInput struct {
	TaskID        string   `json:"task_id"`
	Progress      string   `json:"progress"`
	Decisions     []string `json:"decisions"`
	FilesTouched  []string `json:"files_touched"`
	NextSteps     []string `json:"next_steps"`
	OpenQuestions []string `json:"open_questions"`
	WaitingOn     string   `json:"waiting_on"`
}

// ReturnResultInput is return_result's input (shared/mcp/catalog/schemas/return_result.input.json).
type ReturnResultInput struct {
	TaskID     string          `json:"task_id"`
	Summary    string          `json:"summary"`
	Evidence   []task.Evidence `json:"evidence"`
	Provenance string          `json:"provenance"`
}

// ReviewInput is the requester's verdict on a returned result.
type ReviewInput struct {
	TaskID   string `json:"task_id"`
	Verdict  string `json:"verdict"`
	Feedback string `json:"feedback"`
}

// CancelInput ends a task the caller asked for.
type CancelInput struct {
	TaskID string `json:"task_id"`
	Reason string `json:"reason"`
}

// UpdatePulseInput is update_pulse's input (shared/mcp/catalog/schemas/update_pulse.input.json).
type UpdatePulseInput struct {
	Project      string   `json:"project"`
	Availability string   `json:"availability"`
	Doing        string   `json:"doing"`
	TaskID       string   `json:"task_id"`
	Branch       *string  `json:"branch"`
	Files        []string `json:"files"`
	LastDecision *string  `json:"last_decision"`
}

// UpdatePulseOutput is the stored pulse entry.
type UpdatePulseOutput struct {
	Pulse pulse.Entry `json:"pulse"`
}

// RequestStepInput is request_step's input (shared/mcp/catalog/schemas/request_step.input.json): the exact call and what it is.
type RequestStepInput struct {
	ToolName  string          `json:"tool_name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Kind      string          `json:"kind"`
	Target    string          `json:"target"`
	Amount    *step.Amount    `json:"amount"`
	Reason    string          `json:"reason"`
}

// RequestStepOutput is request_step's output (shared/mcp/catalog/schemas/request_step.output.json): the permission-prompt answer.
type RequestStepOutput struct {
	StepID       string          `json:"step_id"`
	Status       step.Status     `json:"status"`
	Behavior     string          `json:"behavior"`
	UpdatedInput json.RawMessage `json:"updatedInput,omitempty"`
	Message      string          `json:"message,omitempty"`
}
