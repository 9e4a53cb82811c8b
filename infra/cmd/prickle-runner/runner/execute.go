package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/useprickle/prickle/shared/domain/wakeup"
)

// One run, from its wake-up to its record: the task read, the agent CLI run
// in the project, the run ended with Prickle.

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
	exit, res := r.runAgent(project, view.Project, w, sessionDir, &run, logFile, logPath)
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
