package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/useprickle/prickle/infra/cmd/prickle-admin/localjson"
	"github.com/useprickle/prickle/shared/aws/cfn"
	"github.com/useprickle/prickle/shared/mcp/catalog"
)

// Options configure the RIE stack.
type Options struct {
	Root     string // repository root
	StateDir string // where binaries, logs and local.json go
	Port     string // the /mcp router's port; "" picks a free one
	// Gateway is the API in front, as template.yaml's ApiGateway: "rest"
	// (or "") routes by header as the custom domain does; "http" is the
	// HTTP API, every /mcp request to mcp as a payload 2.0 event.
	Gateway string
	// SAM runs the functions in the SAM CLI's containers (sam.go) instead of
	// one aws-lambda-rie each; it implies Gateway "http".
	SAM bool
	Log *slog.Logger
}

// Function is one built bootstrap running under its own aws-lambda-rie.
type Function struct {
	Name      string // directory under functions/
	LogicalID string // template.yaml logical id
	Binary    string
	Size      int64
	LogPath   string
	URL       string // the emulator's Lambda Invoke API base URL

	cmd    *exec.Cmd
	exited chan struct{} // closed once cmd has exited
	client *lambda.Client
	mu     sync.Mutex // the emulator serves one invocation at a time, as one Lambda instance does
	count  int
}

// Stack is the running RIE stack.
type Stack struct {
	opts      Options
	Functions map[string]*Function // by name
	byLogical map[string]*Function
	local     *exec.Cmd
	Local     localjson.State // the local stack's state: emulator endpoint, tables, demo tokens
	MCPURL    string
	StatePath string // local.json of this stack (MCP URL → the router)
	// SigningKey is the approval-link key the functions run with (SIGNING_KEY).
	SigningKey string
	// SlackSecret is the Slack signing secret the slack function runs with (SLACK_SIGNING_SECRET).
	SlackSecret string
	rules       []cfn.Rule
	servers     []*http.Server
	deliver     sync.WaitGroup
	delivered   chan string
	listeners   []net.Listener // the SAM mode's forwarders
	samProcs    []samProc      // the SAM mode's sam local commands
}

// isMCP reports whether a function serves MCP (the mcp front or a tool's
// own): those must build and run; the others run when their mains build.
func isMCP(name string) bool {
	if name == "mcp" {
		return true
	}
	_, ok := catalog.Lookup(name)
	return ok
}

// logicalID is the template's logical id of a function directory: read_room → ReadRoomFunction.
func logicalID(name string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(name, func(r rune) bool { return r == '_' || r == '-' }) {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String() + "Function"
}

// Start builds every function, starts the local stack (emulator, tables,
// seed), one aws-lambda-rie per function, the bus and the /mcp router.
func Start(ctx context.Context, o Options) (*Stack, error) {
	s := &Stack{opts: o, Functions: map[string]*Function{}, byLogical: map[string]*Function{}, delivered: make(chan string, 1024)}
	ok := false
	defer func() {
		if !ok {
			s.Close()
		}
	}()
	rie := filepath.Join(o.Root, ".tools", "bin", "aws-lambda-rie")
	if _, err := os.Stat(rie); err != nil && !o.SAM {
		return nil, fmt.Errorf("no %s: run `make rie`", rie)
	}
	// The SAM mode's containers reach the bus and the Invoke API on the
	// Docker bridge's gateway; the rest listens on loopback.
	inner := "127.0.0.1"
	if o.SAM {
		s.opts.Gateway = "http"
		gw, err := BridgeGateway(ctx)
		if err != nil {
			return nil, err
		}
		inner = gw
	}
	for _, dir := range []string{"bin", "logs"} {
		if err := os.MkdirAll(filepath.Join(o.StateDir, dir), 0o755); err != nil {
			return nil, err
		}
	}
	if err := s.build(ctx); err != nil {
		return nil, err
	}
	if err := s.startLocal(ctx); err != nil {
		return nil, err
	}
	tmpl, err := cfn.LoadTemplate(filepath.Join(o.Root, "template.yaml"))
	if err != nil {
		return nil, err
	}
	if s.rules, err = tmpl.EventRules(map[string]string{"Stage": "local"}); err != nil {
		return nil, err
	}

	// Loopback listeners: the router (/mcp), the Lambda Invoke API the mcp
	// function calls, and the EventBridge API the functions publish to.
	port := o.Port
	if port == "" {
		port = "0"
	}
	routerLn, err := net.Listen("tcp", "127.0.0.1:"+port)
	if err != nil {
		return nil, err
	}
	lambdaLn, err := net.Listen("tcp", inner+":0")
	if err != nil {
		return nil, err
	}
	eventsLn, err := net.Listen("tcp", inner+":0")
	if err != nil {
		return nil, err
	}
	routerURL := "http://" + routerLn.Addr().String()
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	s.SigningKey = hex.EncodeToString(key)
	_, _ = rand.Read(key)
	s.SlackSecret = hex.EncodeToString(key)
	common := []string{
		"AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local", "AWS_REGION=us-east-1", "AWS_EC2_METADATA_DISABLED=true",
		"PRICKLE_DYNAMODB_ENDPOINT=" + s.Local.DynamoDBEndpoint,
		"PRICKLE_EVENTS_ENDPOINT=http://" + eventsLn.Addr().String(),
		"EVENT_BUS_NAME=prickle",
		"TASKS_TABLE=" + s.Local.Tables["TasksTable"], "STEPS_TABLE=" + s.Local.Tables["StepsTable"],
		"PULSE_TABLE=" + s.Local.Tables["PulseTable"], "DIRECTORY_TABLE=" + s.Local.Tables["DirectoryTable"],
		"WAKEUPS_TABLE=" + s.Local.Tables["WakeupsTable"], "OAUTH_TABLE=" + s.Local.Tables["OAuthTable"],
		"SIGNING_KEY=" + s.SigningKey, "PUBLIC_BASE_URL=" + routerURL,
		"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"),
	}
	for _, f := range s.sorted() {
		if o.SAM {
			break
		}
		env := append([]string{}, common...)
		if f.Name == "mcp" {
			env = append(env, "LAMBDA_ENDPOINT=http://"+lambdaLn.Addr().String())
			for _, t := range catalog.All() {
				env = append(env, "TOOL_FUNCTION_"+strings.ToUpper(t.Name)+"="+t.Name)
			}
		}
		if f.Name == "slack" {
			env = append(env, "SLACK_SIGNING_SECRET="+s.SlackSecret)
		}
		if err := s.startRIE(ctx, rie, f, env); err != nil {
			return nil, err
		}
	}

	s.serve(lambdaLn, http.HandlerFunc(s.serveInvoke))
	s.serve(eventsLn, http.HandlerFunc(s.servePutEvents))
	router, err := s.Router()
	if err != nil {
		return nil, err
	}
	s.serve(routerLn, router)
	s.MCPURL = routerURL + "/mcp"
	if o.SAM {
		if err := s.startSAMStack(ctx, inner, lambdaLn.Addr().String(), eventsLn.Addr().String()); err != nil {
			return nil, err
		}
	}

	st := s.Local
	st.MCPURL = s.MCPURL
	b, _ := json.MarshalIndent(st, "", "  ")
	s.StatePath = filepath.Join(o.StateDir, "local.json")
	if err := os.WriteFile(s.StatePath, b, 0o600); err != nil {
		return nil, err
	}
	ok = true
	return s, nil
}

func (s *Stack) sorted() []*Function {
	var out []*Function
	for _, f := range s.Functions {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (s *Stack) serve(ln net.Listener, h http.Handler) {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	s.servers = append(s.servers, srv)
	go func() { _ = srv.Serve(ln) }()
}

// Close stops everything the stack started.
func (s *Stack) Close() {
	s.stopSAM()
	for _, ln := range s.listeners {
		_ = ln.Close()
	}
	for _, srv := range s.servers {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = srv.Shutdown(ctx)
		cancel()
	}
	for _, f := range s.Functions {
		if f.cmd != nil && f.cmd.Process != nil {
			_ = syscall.Kill(-f.cmd.Process.Pid, syscall.SIGTERM)
			<-f.exited
		}
	}
	if s.local != nil && s.local.Process != nil {
		_ = syscall.Kill(-s.local.Process.Pid, syscall.SIGTERM)
	}
}

// InitDurations reads each emulator log's `INIT REPORT(durationMs: …)`.
func (s *Stack) InitDurations() map[string]string {
	out := map[string]string{}
	for _, f := range s.Functions {
		b, err := os.ReadFile(f.LogPath)
		if err != nil {
			continue
		}
		if _, rest, ok := bytes.Cut(b, []byte("INIT REPORT(durationMs: ")); ok {
			v, _, _ := bytes.Cut(rest, []byte(")"))
			out[f.Name] = string(v)
		}
	}
	return out
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return fmt.Sprint(l.Addr().(*net.TCPAddr).Port), nil
}

func randomID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
