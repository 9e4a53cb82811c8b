package runner

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// alive reports whether the process pid exists (and is not a zombie we could still signal).
func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

func readPID(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(b), "\n") {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err == nil {
				return pid
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no pid in %s", path)
	return 0
}

func TestRunProcessExitStatus(t *testing.T) {
	var out bytes.Buffer
	e := runProcess(context.Background(), Command{Argv: []string{"sh", "-c", "echo hello; exit 3"}, Dir: t.TempDir()}, &out, &out, time.Minute, time.Second, nil)
	if e.Code != 3 || e.TimedOut || e.Stopped || e.Signal != "" || strings.TrimSpace(out.String()) != "hello" {
		t.Errorf("exit %+v, output %q", e, out.String())
	}
	if got := e.Describe(time.Minute); !strings.HasPrefix(got, "exited with status 3 after ") {
		t.Errorf("Describe = %q", got)
	}
	e = runProcess(context.Background(), Command{Argv: []string{"/no/such/program"}}, &out, &out, time.Minute, time.Second, nil)
	if e.StartError == "" || e.Code != -1 || !strings.HasPrefix(e.Describe(time.Minute), "could not start: ") {
		t.Errorf("a missing program: %+v", e)
	}
}

// A run past its timeout is ended with its whole process group: the
// background child that ignores SIGTERM is gone too.
func TestRunProcessTimeoutEndsTheGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	script := `sh -c 'trap "" TERM; sleep 60' & echo $! > ` + pidFile + `; sleep 60`
	done := make(chan Exit, 1)
	go func() {
		done <- runProcess(context.Background(), Command{Argv: []string{"sh", "-c", script}, Dir: dir}, &bytes.Buffer{}, &bytes.Buffer{}, 500*time.Millisecond, 300*time.Millisecond, nil)
	}()
	child := readPID(t, pidFile)
	var e Exit
	select {
	case e = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the timed-out run was not ended")
	}
	if !e.TimedOut || e.Signal == "" {
		t.Errorf("exit %+v, want timed out by a signal", e)
	}
	if !strings.Contains(e.Describe(500*time.Millisecond), "run timeout") {
		t.Errorf("Describe = %q", e.Describe(500*time.Millisecond))
	}
	deadline := time.Now().Add(5 * time.Second)
	for alive(child) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if alive(child) {
		_ = syscall.Kill(child, syscall.SIGKILL)
		t.Errorf("the group's child %d (ignoring SIGTERM) survived the timeout", child)
	}
}

// Stopping the runner gives a run SIGTERM and its grace period: a run that
// handles SIGTERM finishes its cleanup and is recorded as stopped.
func TestRunProcessStopGivesGrace(t *testing.T) {
	dir := t.TempDir()
	mark := filepath.Join(dir, "cleaned")
	pidFile := filepath.Join(dir, "pid")
	script := `trap 'sleep 0.2; echo done > ` + mark + `; exit 0' TERM; echo $$ > ` + pidFile + `; while :; do sleep 0.05; done`
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Exit, 1)
	go func() {
		done <- runProcess(ctx, Command{Argv: []string{"sh", "-c", script}, Dir: dir}, &bytes.Buffer{}, &bytes.Buffer{}, time.Minute, 5*time.Second, nil)
	}()
	readPID(t, pidFile)
	cancel()
	e := <-done
	if !e.Stopped || e.TimedOut {
		t.Errorf("exit %+v, want stopped", e)
	}
	if b, err := os.ReadFile(mark); err != nil || strings.TrimSpace(string(b)) != "done" {
		t.Errorf("the run's SIGTERM handler did not finish within the grace period: %v", err)
	}
}
