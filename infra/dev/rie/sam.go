package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/useprickle/prickle/shared/mcp/catalog"
)

// The SAM CLI mode (Options.SAM, `make sam-local`): the functions run in the
// SAM CLI's containers instead of one aws-lambda-rie each. template.yaml is
// built for x86_64 with the HTTP API in front (the REST APIs' routing by
// header is the custom domain's, which sam local does not have); `sam local
// start-api` serves /mcp, `sam local start-lambda` the Lambda Invoke API the
// mcp function hands tool calls to (through this stack's Invoke API, which
// counts them) and the bus delivers events to; `sam local invoke` runs one
// sample (SAMInvoke). The containers reach the host's loopback services
// through the Docker bridge's gateway address.

// samParams are the template parameters of every sam command of this mode.
const samParams = "Architecture=x86_64 ApiGateway=http Stage=local"

// samLocalVars are the variables the local runs set that template.yaml does
// not declare: the SAM CLI passes a function only the variables its template
// declares, so the local template declares them in Globals (empty) and the
// env-vars file fills them.
var samLocalVars = []string{
	"PRICKLE_DYNAMODB_ENDPOINT", "PRICKLE_EVENTS_ENDPOINT", "LAMBDA_ENDPOINT",
	"SIGNING_KEY", "SLACK_SIGNING_SECRET", "PUBLIC_BASE_URL", "AWS_EC2_METADATA_DISABLED",
}

// samFiles are the files of one SAM CLI run, in the state directory.
type samFiles struct {
	Template string // the local template (template.yaml plus samLocalVars)
	BuildDir string // sam build's output; its template.yaml is what sam local runs
	EnvVars  string // the env-vars file (--env-vars)
}

func (s *Stack) samFiles() samFiles {
	dir := s.opts.StateDir
	return samFiles{Template: filepath.Join(dir, "template.yaml"), BuildDir: filepath.Join(dir, "build"), EnvVars: filepath.Join(dir, "env.json")}
}

// BuiltTemplate is the template `sam local` runs in this mode.
func (s *Stack) BuiltTemplate() string { return filepath.Join(s.samFiles().BuildDir, "template.yaml") }

// globalsVariables is the first `Variables:` block under Globals.
var globalsVariables = regexp.MustCompile(`(?m)^Globals:\n(?:.*\n)*?      Variables:\n`)

// restOnly are the conditions of the REST APIs' resources (ApiGateway=rest).
var restOnly = map[string]bool{"IsRestApi": true, "RestWithDomain": true}

// withoutREST drops the resources and outputs whose condition needs the
// REST APIs: sam local does not evaluate conditions, and it would mount
// every per-tool API's /mcp on start-api's one port, over mcp's.
func withoutREST(tmpl []byte) []byte {
	lines := strings.SplitAfter(string(tmpl), "\n")
	var out, block []string
	section := ""
	flush := func() {
		drop := false
		for _, l := range block {
			if c, ok := strings.CutPrefix(strings.TrimRight(l, "\n"), "    Condition: "); ok && restOnly[c] {
				drop = true
			}
		}
		if !drop {
			out = append(out, block...)
		}
		block = nil
	}
	for _, l := range lines {
		top := l != "" && l[0] != ' ' && l[0] != '\n' && l[0] != '#'
		entry := strings.HasPrefix(l, "  ") && !strings.HasPrefix(l, "   ") && !strings.HasPrefix(l, "  #")
		switch {
		case top:
			flush()
			section = strings.TrimSpace(l)
		case entry && (section == "Resources:" || section == "Outputs:"):
			flush()
		}
		block = append(block, l)
	}
	flush()
	return []byte(strings.Join(out, ""))
}

// localTemplate is template.yaml as the local runs build it: samLocalVars
// declared in Globals and the REST APIs' resources left out (withoutREST;
// the nested routing stack too, the only one, so no relative path is left).
func localTemplate(tmpl []byte) ([]byte, error) {
	tmpl = withoutREST(tmpl)
	loc := globalsVariables.FindIndex(tmpl)
	if loc == nil {
		return nil, errors.New("template.yaml: no Globals Function Environment Variables block")
	}
	var b bytes.Buffer
	b.Write(tmpl[:loc[1]])
	b.WriteString("        # Local runs only (sam local): filled by the env-vars file.\n")
	for _, v := range samLocalVars {
		fmt.Fprintf(&b, "        %s: \"\"\n", v)
	}
	b.Write(tmpl[loc[1]:])
	return b.Bytes(), nil
}

// samBuild writes the local template and runs `sam build` on it: every
// function's bootstrap for linux/amd64 (the Makefile's build targets with
// LAMBDA_GOARCH=amd64).
func (s *Stack) samBuild(ctx context.Context) error {
	f := s.samFiles()
	tmpl, err := os.ReadFile(filepath.Join(s.opts.Root, "template.yaml"))
	if err != nil {
		return fmt.Errorf("read template: %w", err)
	}
	local, err := localTemplate(tmpl)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(f.Template), 0o755); err != nil {
		return fmt.Errorf("sam dir: %w", err)
	}
	if err := os.WriteFile(f.Template, local, 0o644); err != nil {
		return fmt.Errorf("write local template: %w", err)
	}
	cmd := s.sam(ctx, "build", "-t", f.Template, "--base-dir", s.opts.Root, "-b", f.BuildDir, "--parallel", "--build-in-source",
		"--parameter-overrides", samParams)
	cmd.Env = append(cmd.Env, "LAMBDA_GOARCH=amd64")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("sam build: %w\n%s", err, out)
	}
	return nil
}

// sam is one SAM CLI command from the project's venv, telemetry off.
func (s *Stack) sam(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, filepath.Join(s.opts.Root, ".venv", "bin", "sam"), args...)
	cmd.Dir = s.opts.Root
	cmd.Env = append(os.Environ(), "SAM_CLI_TELEMETRY=0")
	return cmd
}

// writeEnvVars writes the env-vars file: the common variables for every
// function, mcp's Invoke endpoint and tool functions, slack's secret.
func (s *Stack) writeEnvVars(common map[string]string) error {
	mcp := map[string]string{}
	for _, t := range catalog.All() {
		mcp["TOOL_FUNCTION_"+strings.ToUpper(t.Name)] = t.Name
	}
	b, err := json.MarshalIndent(map[string]map[string]string{
		"Parameters":    common,
		"McpFunction":   mcp,
		"SlackFunction": {"SLACK_SIGNING_SECRET": s.SlackSecret},
	}, "", "  ")
	if err != nil {
		return fmt.Errorf("env vars: %w", err)
	}
	return os.WriteFile(s.samFiles().EnvVars, b, 0o600)
}

// samLocalArgs are the flags every `sam local` command of this mode takes.
func (s *Stack) samLocalArgs() []string {
	f := s.samFiles()
	return []string{"-t", s.BuiltTemplate(), "--env-vars", f.EnvVars, "--skip-pull-image", "--parameter-overrides", samParams}
}

// startSAM runs `sam local <command>` on a loopback port until the stack
// closes and waits until it listens.
func (s *Stack) startSAM(ctx context.Context, command, port string, extra ...string) (string, error) {
	logPath := filepath.Join(s.opts.StateDir, "logs", "sam-"+command+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		return "", fmt.Errorf("sam log: %w", err)
	}
	args := append([]string{"local", command, "--host", "127.0.0.1", "-p", port}, s.samLocalArgs()...)
	cmd := s.sam(context.WithoutCancel(ctx), append(args, extra...)...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("sam local %s: %w", command, err)
	}
	s.samProcs = append(s.samProcs, samProc{cmd: cmd, log: logPath})
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", "127.0.0.1:"+port, time.Second); err == nil {
			c.Close()
			return "http://127.0.0.1:" + port, nil
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-exited:
			return "", fmt.Errorf("sam local %s exited; see %s", command, logPath)
		case <-time.After(200 * time.Millisecond):
		}
	}
	return "", fmt.Errorf("sam local %s not listening after 3 minutes; see %s", command, logPath)
}

// samProc is one long-running sam local command and its log.
type samProc struct {
	cmd *exec.Cmd
	log string
}

// containerID is the SAM CLI's log line naming each container it creates.
var containerID = regexp.MustCompile(`SAM_CONTAINER_ID: ([0-9a-f]{12,64})`)

// stopSAM stops the sam local commands (SIGINT: they stop their warm
// containers) and removes any container their logs name that is left.
func (s *Stack) stopSAM() {
	for _, p := range s.samProcs {
		if p.cmd.Process == nil {
			continue
		}
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGINT)
		done := make(chan struct{})
		go func() { _, _ = p.cmd.Process.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		}
		b, _ := os.ReadFile(p.log)
		for _, m := range containerID.FindAllSubmatch(b, -1) {
			_ = exec.Command("docker", "rm", "-f", string(m[1])).Run()
		}
	}
}

// startSAMStack replaces startRIE in the SAM mode: the template built for
// x86_64, the env-vars file, start-lambda (the functions' Invoke API) and
// start-api (/mcp and the pages). lambdaLn and eventsLn listen on gateway.
func (s *Stack) startSAMStack(ctx context.Context, gateway string, lambdaAddr, eventsAddr string) error {
	if err := s.samBuild(ctx); err != nil {
		return err
	}
	dynamo, err := s.forward(gateway, strings.TrimPrefix(s.Local.DynamoDBEndpoint, "http://"))
	if err != nil {
		return err
	}
	common := map[string]string{
		"AWS_EC2_METADATA_DISABLED": "true",
		"PRICKLE_DYNAMODB_ENDPOINT": "http://" + dynamo,
		"PRICKLE_EVENTS_ENDPOINT":   "http://" + eventsAddr,
		"LAMBDA_ENDPOINT":           "http://" + lambdaAddr,
		"EVENT_BUS_NAME":            "prickle",
		"TASKS_TABLE":               s.Local.Tables["TasksTable"], "STEPS_TABLE": s.Local.Tables["StepsTable"],
		"PULSE_TABLE": s.Local.Tables["PulseTable"], "DIRECTORY_TABLE": s.Local.Tables["DirectoryTable"],
		"WAKEUPS_TABLE": s.Local.Tables["WakeupsTable"], "OAUTH_TABLE": s.Local.Tables["OAuthTable"],
		"SIGNING_KEY": s.SigningKey,
	}
	// start-api's port is known only once it runs; the pages' base URL is it.
	apiPort, err := freePort()
	if err != nil {
		return err
	}
	common["PUBLIC_BASE_URL"] = "http://127.0.0.1:" + apiPort
	if err := s.writeEnvVars(common); err != nil {
		return err
	}
	lambdaPort, err := freePort()
	if err != nil {
		return err
	}
	lambdaURL, err := s.startSAM(ctx, "start-lambda", lambdaPort, "--warm-containers", "LAZY")
	if err != nil {
		return err
	}
	for _, f := range s.Functions {
		f.URL = lambdaURL
		f.client = lambda.New(lambda.Options{
			Region: "us-east-1", BaseEndpoint: aws.String(lambdaURL),
			Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""),
			HTTPClient:  &http.Client{Timeout: 2 * time.Minute},
		})
	}
	apiURL, err := s.startSAM(ctx, "start-api", apiPort, "--warm-containers", "LAZY")
	if err != nil {
		return err
	}
	s.MCPURL = apiURL + "/mcp"
	return nil
}

// SAMInvoke gives one event to `sam local invoke` for a function (by its
// name or logical id) and returns what it answered on stdout.
func (s *Stack) SAMInvoke(ctx context.Context, name string, payload []byte) ([]byte, error) {
	f := s.Functions[name]
	if f == nil {
		f = s.byLogical[name]
	}
	if f == nil {
		return nil, fmt.Errorf("no function %q", name)
	}
	event, err := os.CreateTemp(s.opts.StateDir, "event-*.json")
	if err != nil {
		return nil, fmt.Errorf("event file: %w", err)
	}
	defer os.Remove(event.Name())
	if _, err := event.Write(payload); err != nil {
		return nil, fmt.Errorf("event file: %w", err)
	}
	event.Close()
	f.mu.Lock()
	f.count++
	f.mu.Unlock()
	cmd := s.sam(ctx, append([]string{"local", "invoke", f.LogicalID, "-e", event.Name()}, s.samLocalArgs()...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("sam local invoke %s: %w\n%s", f.LogicalID, err, stderr.Bytes())
	}
	// stdout is the function's answer, after any line the runtime printed.
	out := bytes.TrimSpace(stdout.Bytes())
	if i := bytes.LastIndexByte(out, '\n'); i >= 0 {
		out = out[i+1:]
	}
	return out, nil
}
