package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Exit is how a run's process ended, as recorded in runs.jsonl and its log.
type Exit struct {
	// Code is the exit status; -1 when the process was ended by a signal or never started.
	Code int `json:"code"`
	// Signal names the signal that ended it, if one did.
	Signal string `json:"signal,omitempty"`
	// TimedOut is set when the run timeout ended its process group.
	TimedOut bool `json:"timed_out,omitempty"`
	// Stopped is set when the runner was shutting down and ended the run.
	Stopped bool `json:"stopped,omitempty"`
	// StartError says why the command could not start.
	StartError string        `json:"start_error,omitempty"`
	Duration   time.Duration `json:"duration_ns"`
}

// Describe says in words how the run ended, for its checkpoint and log line.
func (e Exit) Describe(timeout time.Duration) string {
	d := e.Duration.Round(time.Second)
	switch {
	case e.StartError != "":
		return "could not start: " + e.StartError
	case e.TimedOut:
		return fmt.Sprintf("was ended after the %s run timeout (its process group got SIGTERM, then SIGKILL after the grace period)", timeout)
	case e.Stopped:
		return fmt.Sprintf("was stopped after %s because the runner was shutting down", d)
	case e.Signal != "":
		return fmt.Sprintf("was killed by %s after %s", e.Signal, d)
	}
	return fmt.Sprintf("exited with status %d after %s", e.Code, d)
}

// runProcess starts c in its own process group with its standard error in
// out and its standard output in stdout, tells started (if set) its
// process, and waits for it. When timeout passes, or ctx ends (the runner stops), the
// whole group gets SIGTERM and, after grace, SIGKILL.
func runProcess(ctx context.Context, c Command, out, stdout io.Writer, timeout, grace time.Duration, started func(*os.Process)) Exit {
	if len(c.Argv) == 0 {
		return Exit{Code: -1, StartError: "empty command"}
	}
	cmd := exec.Command(c.Argv[0], c.Argv[1:]...)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = c.Dir, c.Env, stdout, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return Exit{Code: -1, StartError: err.Error()}
	}
	pgid := cmd.Process.Pid
	if started != nil {
		started(cmd.Process)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var e Exit
	var err error
	select {
	case err = <-done:
	case <-timer.C:
		e.TimedOut = true
		err = endGroup(pgid, done, grace)
	case <-ctx.Done():
		e.Stopped = true
		err = endGroup(pgid, done, grace)
	}
	e.Duration = time.Since(start)
	e.Code = cmd.ProcessState.ExitCode()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			e.Signal = ws.Signal().String()
		}
	}
	return e
}

// endGroup sends SIGTERM to the process group, waits up to grace for the
// leader and the rest of the group to go, then SIGKILLs whatever is left.
func endGroup(pgid int, done <-chan error, grace time.Duration) error {
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	deadline := time.NewTimer(grace)
	defer deadline.Stop()
	var err error
	select {
	case err = <-done:
	case <-deadline.C:
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		return <-done
	}
	for syscall.Kill(-pgid, 0) == nil {
		select {
		case <-deadline.C:
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			return err
		case <-time.After(50 * time.Millisecond):
		}
	}
	return err
}
