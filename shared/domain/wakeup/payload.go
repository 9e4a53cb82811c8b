package wakeup

// Payload is the JSON body of a wake request.
type Payload struct {
	TaskID     string `json:"task_id"`
	RunID      string `json:"run_id"`
	RunToken   string `json:"run_token"`
	Reason     string `json:"reason"`
	ResumesRun string `json:"resumes_run"`
}

// Reasons a run is woken.
const (
	ReasonTaskRouted     = "task_routed"
	ReasonResultReturned = "result_returned"
	ReasonStepDecided    = "step_decided"
	ReasonResultRefused  = "result_refused"
)
