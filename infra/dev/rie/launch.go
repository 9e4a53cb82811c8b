package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
)

// startLocal runs the local stack (`go run ./infra/dev/local` as built here) for
// its emulator, tables from template.yaml and seed, and reads its local.json.
func (s *Stack) startLocal(ctx context.Context) error {
	bin := filepath.Join(s.opts.StateDir, "bin", "prickle-local")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./infra/dev/local")
	build.Dir = s.opts.Root
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("build infra/dev/local: %v\n%s", err, out)
	}
	stateDir := filepath.Join(s.opts.StateDir, "local")
	port, err := freePort()
	if err != nil {
		return err
	}
	logf, err := os.Create(filepath.Join(s.opts.StateDir, "logs", "local-stack.log"))
	if err != nil {
		return err
	}
	cmd := exec.Command(bin)
	cmd.Dir = s.opts.Root
	cmd.Env = append(os.Environ(), "PORT="+port, "PRICKLE_STATE_DIR="+stateDir, "PRICKLE_FRESH=1")
	cmd.Stdout, cmd.Stderr, cmd.Stdin = logf, logf, nil
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		return err
	}
	s.local = cmd
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	path := filepath.Join(stateDir, "local.json")
	deadline := time.Now().Add(4 * time.Minute)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(path); err == nil && json.Unmarshal(b, &s.Local) == nil && s.Local.MCPURL != "" {
			if resp, err := http.Get(s.Local.MCPURL); err == nil {
				resp.Body.Close()
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-exited:
			return fmt.Errorf("the local stack exited; see %s", logf.Name())
		case <-time.After(200 * time.Millisecond):
		}
	}
	return fmt.Errorf("the local stack was not ready; see %s", logf.Name())
}

// startRIE runs one bootstrap under its own emulator on loopback. An
// emulator that exits before it listens (a port taken between freePort and
// its bind, on a busy machine) is started again on fresh ports, up to three
// times; the error names each attempt's log.
func (s *Stack) startRIE(ctx context.Context, rie string, f *Function, env []string) error {
	var failures []string
	for attempt := 1; attempt <= 3; attempt++ {
		err := s.startRIEOnce(ctx, rie, f, env, attempt)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		failures = append(failures, err.Error())
	}
	return fmt.Errorf("aws-lambda-rie for %s not listening after 3 attempts: %s", f.Name, strings.Join(failures, "; "))
}

// startRIEOnce is one attempt of startRIE: it starts the emulator and waits
// up to a minute for its invoke port, or for it to exit.
func (s *Stack) startRIEOnce(ctx context.Context, rie string, f *Function, env []string, attempt int) error {
	api, err := freePort()
	if err != nil {
		return err
	}
	rt, err := freePort()
	if err != nil {
		return err
	}
	f.LogPath = filepath.Join(s.opts.StateDir, "logs", f.Name+".log")
	if attempt > 1 {
		f.LogPath = filepath.Join(s.opts.StateDir, "logs", fmt.Sprintf("%s.%d.log", f.Name, attempt))
	}
	logf, err := os.Create(f.LogPath)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(rie, "--runtime-interface-emulator-address", "127.0.0.1:"+api, "--runtime-api-address", "127.0.0.1:"+rt, "./bootstrap")
	cmd.Dir = filepath.Dir(f.Binary)
	cmd.Env = append(env, "AWS_LAMBDA_FUNCTION_NAME="+f.Name, "AWS_LAMBDA_FUNCTION_MEMORY_SIZE=256", "AWS_LAMBDA_FUNCTION_TIMEOUT=30")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start aws-lambda-rie for %s: %w", f.Name, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	f.cmd, f.exited = cmd, exited
	f.URL = "http://127.0.0.1:" + api
	f.client = lambda.New(lambda.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(f.URL),
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""),
	})
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", "127.0.0.1:"+api, time.Second); err == nil {
			c.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-exited:
			return fmt.Errorf("attempt %d exited (%s); see %s", attempt, cmd.ProcessState, f.LogPath)
		case <-time.After(50 * time.Millisecond):
		}
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	<-exited
	return fmt.Errorf("attempt %d not listening within a minute; see %s", attempt, f.LogPath)
}
