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

// One run, from its wake-up to its record: the task read, the agent CLI run
// in the project, the run ended with Prickle, and what it leaves behind (a
// checkpoint when it left none of its own, its line in runs.jsonl).

// execute runs one wake-up from start to its record, and finishes the
// wake-up with its source when the run ended by itself.
func (r *Runner) execute(d *delivery) {
	w := d.w
	select {
	case r.sem <- struct{}{}:
	case <-r.ctx.Done():
		r.forget(d.key)
		return
	}
	defer func() { <-r.sem }()
	// Prickle calls outlive a stop (the run's checkpoint is saved on the way out), each bounded.
	calls := func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.WithoutCancel(r.ctx), r.callTimeout())
	}
	ctx, cancel := calls()
	if d.via == ViaJournal && !r.tokenWorks(ctx, w) {
		cancel()
		r.Out.Warn("journaled wake-up dropped: its run token no longer works (it expired or its run ended); the task's next wake-up resumes its session",
			"task", w.TaskID, "run", w.RunID)
		r.finish(d)
		return
	}
	if r.held(ctx, d) {
		cancel()
		return
	}
	view, err := r.taskView(ctx, w)
	cancel()
	if err != nil {
		r.Out.Error("run not started: cannot read its task", "task", w.TaskID, "run", w.RunID, "error", err.Error())
		r.forget(d.key)
		return
	}
	project, ok := r.Config.Project(view.Project)
	if !ok {
		r.Out.Error("run not started: no project in the config", "task", w.TaskID, "run", w.RunID, "project", view.Project)
		return
	}
	logPath := filepath.Join(r.Config.LogDir, time.Now().UTC().Format("20060102T150405")+"-"+safeName(w.TaskID)+"-"+safeName(w.RunID)+".log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		r.Out.Error("run not started: log file", "task", w.TaskID, "run", w.RunID, "error", err.Error())
		r.forget(d.key)
		return
	}
	defer logFile.Close()

	sessionDir := SessionDir(r.Config.StateDir, view.Party(w.Reason), w.TaskID)
	run := r.session(sessionDir, w)
	// The work tree as the run starts: what its shell changes is claimed against it (shellclaims.go).
	ctx, cancel = calls()
	markTree(ctx, sessionDir, project.Dir)
	cancel()
	exit, res := r.runAgent(project, view.Project, w, sessionDir, &run, logFile, logPath)
	r.claimTreeAtEnd(w, sessionDir, project.Dir, view.Project)
	how := exit.Describe(r.Config.RunTimeout)
	paused := res.paused
	if paused != nil {
		how += fmt.Sprintf(", paused on its %s call %s until its owner decides", paused.Name, paused.ToolUseID)
	}
	fmt.Fprintf(logFile, "\n# prickle-runner: the run %s\n", how)
	ctx, cancel = calls()
	checkpoint := r.settle(ctx, w, view, how, logPath)
	ended := !exit.Stopped
	if ended {
		r.releaseClaims(w, sessionDir, paused)
		// Its token ends with it: a later wake-up of the task brings a new one.
		if err := r.Tasks.EndRun(ctx, w.RunToken, res.usage); err != nil {
			r.Out.Warn(endRunProblem(err), "task", w.TaskID, "run", w.RunID, "error", err.Error())
		}
	}
	cancel()
	r.record(Record{At: time.Now().UTC(), TaskID: w.TaskID, RunID: w.RunID, Reason: w.Reason, ResumesRun: w.ResumesRun,
		Project: view.Project, Session: run.sessionID, Resumed: run.resumed, Paused: paused, Usage: res.usage,
		Exit: exit, Log: logPath, Checkpoint: checkpoint})
	end := []any{"task", w.TaskID, "run", w.RunID, "session", run.sessionID, "resumed", run.resumed,
		"exit_code", exit.Code, "signal", exit.Signal, "timed_out", exit.TimedOut, "stopped", exit.Stopped,
		"duration", exit.Duration.Round(time.Millisecond).String(), "checkpoint", checkpoint, "log", logPath}
	if paused != nil {
		end = append(end, "paused", paused.Name, "paused_call", paused.ToolUseID)
	}
	if res.usage != nil {
		end = append(end, "cost_usd", res.usage.CostUSD)
	}
	r.Out.Info("run end", end...)

	if ended {
		r.finish(d)
		return
	}
	r.Out.Info("wake-up kept: the run was stopped, so it comes back and resumes its session", "task", w.TaskID, "run", w.RunID, "delivery", d.key)
}

// tokenWorks reports whether a wake-up's run token still reads its task.
func (r *Runner) tokenWorks(ctx context.Context, w wakeup.Payload) bool {
	_, err := r.Tasks.Task(ctx, w.RunToken, w.TaskID)
	return err == nil || errors.Is(err, ErrRefused)
}

// taskView reads the task with the run token, or with the agent token if
// the run token does not work (expired, or the run was revoked).
func (r *Runner) taskView(ctx context.Context, w wakeup.Payload) (TaskView, error) {
	v, err := r.Tasks.Task(ctx, w.RunToken, w.TaskID)
	if err == nil || errors.Is(err, ErrRefused) || r.AgentToken == "" {
		return v, err
	}
	v, err2 := r.Tasks.Task(ctx, r.AgentToken, w.TaskID)
	if err2 != nil {
		return v, fmt.Errorf("with the run token: %v; with the agent token: %w", err, err2)
	}
	return v, nil
}

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
