package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/useprickle/prickle/shared/domain/wakeup"
)

// What a run leaves behind: a checkpoint when it left none of its own, and
// its line in runs.jsonl.

// Record is one line of runs.jsonl: a run and how it ended.
type Record struct {
	At         time.Time `json:"at"`
	TaskID     string    `json:"task_id"`
	RunID      string    `json:"run_id"`
	Reason     string    `json:"reason"`
	ResumesRun string    `json:"resumes_run,omitempty"`
	Project    string    `json:"project,omitempty"`
	// Session is the agent CLI's session the run started or resumed; Resumed
	// says it continued the task's earlier conversation.
	Session string `json:"session,omitempty"`
	Resumed bool   `json:"resumed"`
	// Paused is the call the run stopped on to wait for its owner.
	Paused     *Call  `json:"paused,omitempty"`
	Usage      *Usage `json:"usage,omitempty"`
	Exit       Exit   `json:"exit"`
	Log        string `json:"log"`
	Checkpoint string `json:"checkpoint"`
}

// settle leaves a checkpoint saying how the run ended unless the run left
// one (or a result) of its own; it returns what was done, for the record.
func (r *Runner) settle(ctx context.Context, w wakeup.Payload, before TaskView, how, logPath string) string {
	if w.Reason == wakeup.ReasonResultReturned {
		return "none: a requester's run (only the assignee checkpoints)"
	}
	after, err := r.taskView(ctx, w)
	if err != nil {
		return "unknown: " + err.Error()
	}
	if after.Marks > before.Marks {
		return "own"
	}
	switch after.State {
	case "accepted", "working", "waiting":
	default:
		return "none: the task is " + after.State
	}
	progress := fmt.Sprintf("prickle-runner: run %s (%s) %s without return_result or a checkpoint of its own.", w.RunID, w.Reason, how)
	next := []string{"Read the run's log on the runner's machine: " + clip(logPath, 400)}
	err = r.Tasks.Checkpoint(ctx, w.RunToken, w.TaskID, progress, next)
	if err != nil && !errors.Is(err, ErrRefused) && r.AgentToken != "" {
		if err = r.Tasks.Checkpoint(ctx, r.AgentToken, w.TaskID, progress, next); err == nil {
			return "saved by the runner (agent token)"
		}
	}
	if err != nil {
		r.Out.Warn("checkpoint failed", "task", w.TaskID, "run", w.RunID, "error", err.Error())
		return "failed: " + err.Error()
	}
	return "saved by the runner"
}

// record appends rec to runs.jsonl in the log dir.
func (r *Runner) record(rec Record) {
	b, err := json.Marshal(rec)
	if err != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	f, err := os.OpenFile(filepath.Join(r.Config.LogDir, "runs.jsonl"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		r.Out.Error("record run", "run", rec.RunID, "error", err.Error())
		return
	}
	defer f.Close()
	_, _ = f.Write(append(b, '\n'))
}
