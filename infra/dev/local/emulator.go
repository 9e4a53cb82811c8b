package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// emulator is the moto server this stack started and will stop.
type emulator struct {
	cmd      *exec.Cmd
	endpoint string
	exited   chan error
}

// emulatorStopTime is how long stop waits for the emulator to save its
// snapshot (the next start then replays nothing) before it kills it.
const emulatorStopTime = 60 * time.Second

// startEmulator runs infra/dev/emulator/launcher.py from the project venv on a free
// loopback port, replaying and appending statePath so data survives restarts.
func startEmulator(ctx context.Context, statePath, logPath string) (*emulator, error) {
	python := ".venv/bin/python"
	if _, err := os.Stat(python); err != nil {
		return nil, fmt.Errorf("no project venv at %s: run `make local` (it creates the venv) or `make venv`", python)
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("emulator log: %w", err)
	}
	cmd := exec.Command(python, "infra/dev/emulator/launcher.py", "--host", "127.0.0.1", "--port", fmt.Sprint(port), "--state", statePath)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Its own process group, so stopping the stack stops the emulator too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start emulator: %w", err)
	}
	exited := make(chan error, 1)
	e := &emulator{cmd: cmd, endpoint: fmt.Sprintf("http://127.0.0.1:%d", port), exited: exited}
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			return nil, fmt.Errorf("emulator exited (%v); see %s", err, logPath)
		case <-ctx.Done():
			e.stop()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second); err == nil {
			c.Close()
			return e, nil
		}
	}
	e.stop()
	return nil, fmt.Errorf("emulator not listening after 60s; see %s", logPath)
}

// stop asks the emulator to save its state and exit, and waits for it.
func (e *emulator) stop() {
	if e.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-e.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-e.exited:
	case <-time.After(emulatorStopTime):
		_ = syscall.Kill(-e.cmd.Process.Pid, syscall.SIGKILL)
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
