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
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
)

// startLocal runs the local stack (`go run ./infra/local` as built here) for
// its emulator, tables from template.yaml and seed, and reads its local.json.
func (s *Stack) startLocal(ctx context.Context) error {
	bin := filepath.Join(s.opts.StateDir, "bin", "prickle-local")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./infra/local")
	build.Dir = s.opts.Root
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("build infra/local: %v\n%s", err, out)
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

// startRIE runs one bootstrap under its own emulator on loopback.
func (s *Stack) startRIE(ctx context.Context, rie string, f *Function, env []string) error {
	api, err := freePort()
	if err != nil {
		return err
	}
	rt, err := freePort()
	if err != nil {
		return err
	}
	f.LogPath = filepath.Join(s.opts.StateDir, "logs", f.Name+".log")
	logf, err := os.Create(f.LogPath)
	if err != nil {
		return err
	}
	cmd := exec.Command(rie, "--runtime-interface-emulator-address", "127.0.0.1:"+api, "--runtime-api-address", "127.0.0.1:"+rt, "./bootstrap")
	cmd.Dir = filepath.Dir(f.Binary)
	cmd.Env = append(env, "AWS_LAMBDA_FUNCTION_NAME="+f.Name, "AWS_LAMBDA_FUNCTION_MEMORY_SIZE=256", "AWS_LAMBDA_FUNCTION_TIMEOUT=30")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start aws-lambda-rie for %s: %w", f.Name, err)
	}
	f.cmd = cmd
	f.URL = "http://127.0.0.1:" + api
	f.client = lambda.New(lambda.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(f.URL),
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""),
	})
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", "127.0.0.1:"+api, time.Second); err == nil {
			c.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("aws-lambda-rie for %s not listening; see %s", f.Name, f.LogPath)
}
