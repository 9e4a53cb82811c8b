package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/useprickle/prickle/infra/stack"
	"github.com/useprickle/prickle/shared/catalog"
	"github.com/useprickle/prickle/shared/endpoint"
	"github.com/useprickle/prickle/shared/mcplambda"
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
	Local     localState // the local stack's state: emulator endpoint, tables, demo tokens
	MCPURL    string
	StatePath string // local.json of this stack (MCP URL → the router)
	// SigningKey is the approval-link key the functions run with (SIGNING_KEY).
	SigningKey string
	// SlackSecret is the Slack signing secret the slack function runs with (SLACK_SIGNING_SECRET).
	SlackSecret string
	rules       []stack.Rule
	servers     []*http.Server
	deliver     sync.WaitGroup
	delivered   chan string
	listeners   []net.Listener // the SAM mode's forwarders
	samProcs    []samProc      // the SAM mode's sam local commands
}

// localState mirrors infra/local's local.json.
type localState struct {
	MCPURL           string            `json:"mcp_url"`
	Tokens           map[string]string `json:"tokens"`
	DynamoDBEndpoint string            `json:"dynamodb_endpoint"`
	Tables           map[string]string `json:"tables"`
}

// mcpFunctions must build and run; the others run when their mains build.
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
	tmpl, err := stack.LoadTemplate(filepath.Join(o.Root, "template.yaml"))
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

// build compiles every functions/<name> for this machine (the emulator runs
// it natively; the deployed build is linux/arm64, same flags).
func (s *Stack) build(ctx context.Context) error {
	dirs, err := os.ReadDir(filepath.Join(s.opts.Root, "functions"))
	if err != nil {
		return err
	}
	type result struct {
		f   *Function
		err error
		out []byte
	}
	results := make(chan result)
	n := 0
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(s.opts.Root, "functions", d.Name(), "main.go")); err != nil {
			continue
		}
		n++
		f := &Function{Name: d.Name(), LogicalID: logicalID(d.Name()), Binary: filepath.Join(s.opts.StateDir, "bin", d.Name(), "bootstrap")}
		go func() {
			cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false", "-tags", "lambda.norpc", "-ldflags", "-s -w", "-o", f.Binary, "./functions/"+f.Name)
			cmd.Dir = s.opts.Root
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+runtime.GOOS, "GOARCH="+runtime.GOARCH)
			out, err := cmd.CombinedOutput()
			results <- result{f, err, out}
		}()
	}
	var errs []error
	for range n {
		r := <-results
		if r.err != nil {
			if isMCP(r.f.Name) {
				errs = append(errs, fmt.Errorf("build %s: %v\n%s", r.f.Name, r.err, r.out))
			} else {
				s.opts.Log.Warn("function does not build; left out", "function", r.f.Name, "error", string(r.out))
			}
			continue
		}
		if fi, err := os.Stat(r.f.Binary); err == nil {
			r.f.Size = fi.Size()
		}
		s.Functions[r.f.Name] = r.f
		s.byLogical[r.f.LogicalID] = r.f
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	for _, t := range append([]string{"mcp"}, toolNames()...) {
		if s.Functions[t] == nil {
			return fmt.Errorf("no functions/%s/main.go", t)
		}
	}
	return nil
}

func toolNames() []string {
	var out []string
	for _, t := range catalog.All() {
		out = append(out, t.Name)
	}
	return out
}

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

// Invoke is the Lambda Invoke API over the emulators: FunctionName is a
// function's name (functions/<name>); the call goes, one at a time, to that
// function's emulator (function name "function" there).
func (s *Stack) Invoke(ctx context.Context, in *lambda.InvokeInput, opts ...func(*lambda.Options)) (*lambda.InvokeOutput, error) {
	name := aws.ToString(in.FunctionName)
	f := s.Functions[name]
	if f == nil {
		f = s.byLogical[name]
	}
	if f == nil {
		return nil, fmt.Errorf("no function %q in the RIE stack", name)
	}
	c := *in
	c.FunctionName = aws.String("function")
	if s.opts.SAM {
		c.FunctionName = aws.String(f.LogicalID) // start-lambda serves every function by logical id
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.count++
	out, err := f.client.Invoke(ctx, &c, opts...)
	if err == nil && out.FunctionError == nil && isErrorPayload(out.Payload) {
		// The emulator answers a failed invocation with the error document
		// but without Lambda's X-Amz-Function-Error header: add what Lambda says.
		out.FunctionError = aws.String("Unhandled")
	}
	return out, err
}

// isErrorPayload reports whether a payload is the runtime's error document.
func isErrorPayload(p []byte) bool {
	var e struct {
		Message *string `json:"errorMessage"`
		Type    *string `json:"errorType"`
	}
	return json.Unmarshal(p, &e) == nil && e.Message != nil && e.Type != nil
}

// Counts says how many times each function was invoked.
func (s *Stack) Counts() map[string]int {
	out := map[string]int{}
	for _, f := range s.Functions {
		f.mu.Lock()
		out[f.Name] = f.count
		f.mu.Unlock()
	}
	return out
}

// Router serves the API in front. REST (the default) as the custom
// domain's routing rules do: Mcp-Name tool calls straight to the tool's
// function, everything else to mcp; each hop is a Lambda Invoke with the
// API Gateway proxy event. /slack/... goes to slack, /runner/... to runner;
// / and /a/... go to web. With Gateway "http", the HTTP API's routes (httpAPIRouter).
func (s *Stack) Router() (http.Handler, error) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /rie/counts", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(s.Counts())
	})
	switch s.opts.Gateway {
	case "http":
		s.httpAPIRouter(mux)
		return mux, nil
	case "", "rest":
	default:
		return nil, fmt.Errorf("gateway %q: want rest or http", s.opts.Gateway)
	}
	tools := map[string]http.Handler{}
	for _, t := range catalog.All() {
		tools[t.Name] = mcplambda.Forward{Lambda: s, Function: t.Name}
	}
	mux.Handle("/mcp", endpoint.RouteByHeader(mcplambda.Forward{Lambda: s, Function: "mcp"}, tools))
	if s.Functions["slack"] != nil {
		mux.Handle("/slack/", mcplambda.Forward{Lambda: s, Function: "slack"})
	}
	if s.Functions["runner"] != nil {
		mux.Handle("/runner/", mcplambda.Forward{Lambda: s, Function: "runner"})
	}
	if s.Functions["oauth"] != nil {
		for _, p := range []string{"/oauth/", "/.well-known/"} {
			mux.Handle(p, mcplambda.Forward{Lambda: s, Function: "oauth"})
		}
	}
	if s.Functions["web"] != nil {
		mux.Handle("/", mcplambda.Forward{Lambda: s, Function: "web"})
	}
	return mux, nil
}

// serveInvoke is the Lambda Invoke API the mcp function's SDK client calls.
func (s *Stack) serveInvoke(w http.ResponseWriter, r *http.Request) {
	const prefix = "/2015-03-31/functions/"
	name, ok := strings.CutSuffix(strings.TrimPrefix(r.URL.Path, prefix), "/invocations")
	if r.Method != http.MethodPost || !ok || !strings.HasPrefix(r.URL.Path, prefix) {
		http.Error(w, "not the Invoke API", http.StatusNotFound)
		return
	}
	payload, _ := io.ReadAll(r.Body)
	out, err := s.Invoke(r.Context(), &lambda.InvokeInput{FunctionName: aws.String(name), Payload: payload})
	if err != nil {
		w.Header().Set("X-Amzn-ErrorType", "ServiceException")
		http.Error(w, fmt.Sprintf(`{"message":%q}`, err.Error()), http.StatusBadGateway)
		return
	}
	if out.FunctionError != nil {
		w.Header().Set("X-Amz-Function-Error", aws.ToString(out.FunctionError))
	}
	w.Header().Set("X-Amz-Executed-Version", "$LATEST")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out.Payload)
}

// servePutEvents is EventBridge's PutEvents for the functions: each entry
// is delivered, as the template's rules say, to every matching function by
// an asynchronous invoke with the EventBridge envelope, retried on error.
func (s *Stack) servePutEvents(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Entries []struct {
			Source, DetailType, Detail, EventBusName string
			Time                                     *float64
		}
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || !strings.HasSuffix(r.Header.Get("X-Amz-Target"), "PutEvents") {
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"__type":"ValidationException","message":"only PutEvents is served"}`))
		return
	}
	type result struct {
		EventId string
	}
	out := struct {
		Entries          []result
		FailedEntryCount int
	}{}
	for _, e := range in.Entries {
		id := randomID()
		out.Entries = append(out.Entries, result{EventId: id})
		cw := events.CloudWatchEvent{Version: "0", ID: id, DetailType: e.DetailType, Source: e.Source, AccountID: "000000000000",
			Time: time.Now().UTC(), Region: "us-east-1", Resources: []string{}, Detail: json.RawMessage(e.Detail)}
		payload, _ := json.Marshal(cw)
		for _, rule := range s.rules {
			if !matches(rule, e.Source, e.DetailType) {
				continue
			}
			f := s.byLogical[rule.Function]
			if f == nil {
				s.opts.Log.Warn("rule target not running", "function", rule.Function, "detail_type", e.DetailType)
				continue
			}
			s.deliver.Add(1)
			go func() {
				defer s.deliver.Done()
				s.deliverOne(f, e.DetailType, payload)
			}()
		}
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	_ = json.NewEncoder(w).Encode(out)
}

func (s *Stack) deliverOne(f *Function, detailType string, payload []byte) {
	for attempt := 1; attempt <= 3; attempt++ {
		out, err := s.Invoke(context.Background(), &lambda.InvokeInput{FunctionName: aws.String(f.Name), Payload: payload})
		if err == nil && out.FunctionError == nil {
			select {
			case s.delivered <- f.Name + " " + detailType:
			default:
			}
			return
		}
		msg := ""
		if err != nil {
			msg = err.Error()
		} else {
			msg = string(out.Payload)
		}
		s.opts.Log.Warn("event delivery failed", "function", f.Name, "detail_type", detailType, "attempt", attempt, "error", msg)
		time.Sleep(time.Duration(attempt) * 200 * time.Millisecond)
	}
}

func matches(r stack.Rule, source, detailType string) bool {
	okSource := len(r.Source) == 0
	for _, s := range r.Source {
		okSource = okSource || s == source
	}
	for _, d := range r.DetailTypes {
		if okSource && d == detailType {
			return true
		}
	}
	return false
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
			_, _ = f.cmd.Process.Wait()
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

func invokeInput(name string, payload []byte) *lambda.InvokeInput {
	return &lambda.InvokeInput{FunctionName: aws.String(name), Payload: payload}
}
