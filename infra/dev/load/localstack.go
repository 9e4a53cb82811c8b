package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// ownStack is a local stack the load command started (infra/dev/local, built
// once by localBinary) on a free port with a throw-away state dir, in its own
// process group.
type ownStack struct {
	cmd       *exec.Cmd
	dir       string
	stateFile string
	started   time.Time
	ready     time.Duration // from start until its MCP endpoint answered
}

func startStack(ctx context.Context) (*ownStack, error) {
	dir, err := os.MkdirTemp("", "prickle-load-")
	if err != nil {
		return nil, fmt.Errorf("state dir: %w", err)
	}
	return startStackIn(ctx, dir, true)
}

// builtLocal is infra/dev/local built by localBinary, once per load command.
var builtLocal struct {
	once sync.Once
	path string
	err  error
}

// localBinary builds infra/dev/local once, so that a stack's time to ready
// (fresh or restarted) counts the stack starting, never the Go compiler.
func localBinary(ctx context.Context) (string, error) {
	builtLocal.once.Do(func() {
		dir, err := os.MkdirTemp("", "prickle-load-bin-")
		if err != nil {
			builtLocal.err = fmt.Errorf("bin dir: %w", err)
			return
		}
		builtLocal.path = filepath.Join(dir, "prickle-local")
		started := time.Now()
		out, err := exec.CommandContext(ctx, "go", "build", "-o", builtLocal.path, "./infra/dev/local").CombinedOutput()
		if err != nil {
			builtLocal.err = fmt.Errorf("build infra/dev/local: %w\n%s", err, out)
			return
		}
		fmt.Printf("load: built infra/dev/local in %.1f s\n", time.Since(started).Seconds())
	})
	return builtLocal.path, builtLocal.err
}

// removeLocalBinary deletes what localBinary built, if it built anything.
func removeLocalBinary() {
	if builtLocal.path != "" {
		_ = os.RemoveAll(filepath.Dir(builtLocal.path))
	}
}

// startStackIn starts a local stack keeping its state in dir: fresh forgets
// what dir holds, otherwise the stack restarts from it.
func startStackIn(ctx context.Context, dir string, fresh bool) (*ownStack, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("free port: %w", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	logf, err := os.Create(filepath.Join(dir, "local-stack.log"))
	if err != nil {
		return nil, fmt.Errorf("stack log: %w", err)
	}
	bin, err := localBinary(ctx)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, bin)
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port), "PRICKLE_STATE_DIR="+dir)
	if fresh {
		cmd.Env = append(cmd.Env, "PRICKLE_FRESH=1")
	} else {
		// The stack rewrites local.json once it is ready: until then the old one must not count.
		_ = os.Remove(filepath.Join(dir, "local.json"))
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the local stack: %w", err)
	}
	s := &ownStack{cmd: cmd, dir: dir, stateFile: filepath.Join(dir, "local.json"), started: time.Now()}
	fmt.Printf("load: starting a local stack on 127.0.0.1:%d (log %s)\n", port, logf.Name())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(4 * time.Minute)
	for {
		if info, err := readStack(s.stateFile); err == nil {
			if resp, err := http.Get(info.MCPURL); err == nil {
				_ = resp.Body.Close()
				s.ready = time.Since(s.started)
				return s, nil
			}
		}
		select {
		case err := <-exited:
			b, _ := os.ReadFile(logf.Name())
			return nil, fmt.Errorf("the local stack exited before it was ready (%v):\n%s", err, b)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.stop(true)
			return nil, fmt.Errorf("the local stack was not ready after 4 minutes (log %s)", logf.Name())
		}
	}
}

// stop ends the stack's process group and removes its state, or keeps it
// (the stack's log) when keep is set.
func (s *ownStack) stop(keep bool) {
	s.halt()
	if keep {
		fmt.Printf("load: the stack's state and log are kept in %s\n", s.dir)
		return
	}
	_ = os.RemoveAll(s.dir)
}

// halt ends the stack's process group as Ctrl-C does, giving it up to 30 s
// to save its state, and keeps the state dir.
func (s *ownStack) halt() {
	if s.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
	for i := 0; i < 300 && syscall.Kill(-s.cmd.Process.Pid, 0) == nil; i++ {
		time.Sleep(100 * time.Millisecond)
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
}
