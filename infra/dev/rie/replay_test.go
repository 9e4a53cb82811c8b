//go:build rie

// Replays every file in events/ through the RIE stack (`make e2e-rie`):
// API Gateway proxy requests are routed as the custom domain routes them and
// their responses asserted; HTTP API (payload 2.0) requests as the HttpApi
// of ApiGateway=http routes them; EventBridge events go to every function whose
// template rule matches them; DynamoDB stream records go to step-expiry
// (steps table) or task-events (tasks table).
// Each must come back without a function error.
//
// With PRICKLE_RIE_SAM=1 (`make e2e-sam`) the stack is the SAM CLI mode and
// each sample is given to `sam local invoke` for its function instead; the
// same answers are expected.
package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/useprickle/prickle/infra/cmd/prickle-admin/dynamo"
	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/auth/link"
	"github.com/useprickle/prickle/shared/aws/lambdahttp"
	"github.com/useprickle/prickle/shared/aws/store"
	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/domain/wakeup"
	"github.com/useprickle/prickle/shared/mcp/catalog"
	"github.com/useprickle/prickle/shared/owners/slack"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/admin"
)

// fixture stores what the stream samples of events/ refer to: the task
// tsk_expirydemo0001 of bo/codex, waiting on its owner for the step that
// TTL has since deleted (as shared/jobs/stepexpiry's integration test sets it up).
func fixture(ctx context.Context) error {
	client, err := dynamo.Client(ctx, rs.Local.DynamoDBEndpoint)
	if err != nil {
		return err
	}
	tb := rs.Local.Tables
	st := store.New(client, store.Tables{Tasks: tb["TasksTable"], Steps: tb["StepsTable"], Pulse: tb["PulseTable"], Directory: tb["DirectoryTable"], Wakeups: tb["WakeupsTable"]})
	adm := admin.New(st)
	for _, err := range []error{
		adm.CreateOwner(ctx, team.Owner{Name: "ana"}), adm.CreateOwner(ctx, team.Owner{Name: "bo"}),
		adm.CreateAgent(ctx, "ana/claude", []string{"website-v2"}), adm.CreateAgent(ctx, "bo/codex", []string{"website-v2"}),
	} {
		if err != nil {
			return err
		}
	}
	created := time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC)
	tk := task.Task{ID: "tsk_expirydemo0001", Project: "website-v2", State: task.Working, Requester: "ana/claude", Assignee: "bo/codex",
		Packet:    task.Packet{Task: "clean staging", DeliverableType: "other", AcceptanceCriteria: []string{"done"}, Files: []string{}, DependsOn: []string{}},
		CreatedAt: created, UpdatedAt: created, Version: 1}
	if err := st.CreateTask(ctx, tk, task.Event{At: created, By: "ana/claude", Action: "hand_off", To: task.Working}); err != nil {
		return err
	}
	wait := task.WaitingOnOwnerApproval
	waiting := tk
	waiting.State, waiting.WaitingOn, waiting.UpdatedAt = task.Waiting, &wait, created.Add(time.Hour)
	from := task.Working
	if err := st.ApplyMove(ctx, 1, task.Move{Task: waiting, Event: task.Event{At: waiting.UpdatedAt, By: "bo/codex", Action: "request_step", From: &from, To: task.Waiting}}); err != nil {
		return err
	}
	// The step of alice/writer that events/slack-block-actions.json approves from Slack.
	run := identity.Caller{Agent: "alice/writer", Owner: "alice", Kind: identity.KindRun, TaskID: "example-task-id", RunID: "run_rie_slack"}
	out, err := team.New(st).RequestStep(ctx, run, team.RequestStepInput{
		ToolName: "Bash", Input: json.RawMessage(`{"command":"git push origin main"}`), Kind: "outbound", Target: "origin", Reason: "replay of the Slack sample",
	})
	if err != nil {
		return err
	}
	slackStep, err = st.Step(ctx, "example-task-id", out.StepID)
	if err != nil {
		return err
	}
	fixtureStore = st
	// alice/writer in pull mode, with the wake-up events/runner-api-claim.json claims.
	if err := st.DeleteWakeHook(ctx, "alice/writer"); err != nil {
		return err
	}
	now := time.Now().UTC()
	return st.PutPendingWakeup(ctx, wakeup.Pending{ID: wakeup.PendingID("rie-replay", "alice/writer", now), Agent: "alice/writer",
		TaskID: "example-task-id", Reason: wakeup.ReasonTaskRouted, EventID: "rie-replay", CreatedAt: now})
}

// slackStep is the pending step the Slack sample approves; fixtureStore reads it back.
var (
	slackStep    step.Step
	fixtureStore *store.Store
)

var rs *Stack

func TestMain(m *testing.M) {
	root, _ := filepath.Abs("../../..")
	dir, err := os.MkdirTemp("", "prickle-rie-test-")
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	rs, err = Start(ctx, Options{Root: root, StateDir: dir, Log: slog.New(slog.NewTextHandler(os.Stderr, nil)), SAM: os.Getenv("PRICKLE_RIE_SAM") == "1"})
	if err != nil {
		cancel()
		os.RemoveAll(dir)
		panic(err)
	}
	if err := fixture(ctx); err != nil {
		rs.Close()
		panic(err)
	}
	code := m.Run()
	rs.deliver.Wait()
	rs.Close()
	cancel()
	os.RemoveAll(dir)
	os.Exit(code)
}

// placeholders fills a sample's REPLACE_WITH_* values with live ones.
func placeholders(t *testing.T, raw []byte) []byte {
	signer, err := link.NewSigner([]byte(rs.SigningKey))
	if err != nil {
		t.Fatal(err)
	}
	// A validly signed link to a step that does not exist: the page must
	// get past the signature and the form check and answer "not found".
	token := signer.Sign(link.ForStep("example-task-id", "stp_replaymissing01", "alice", time.Now().Add(time.Hour)).DeliveredBy(link.ViaEmail))
	slackToken := signer.Sign(link.ForStep(slackStep.TaskID, slackStep.ID, "alice", slackStep.ExpiresAt).DeliveredBy(link.ViaSlack))
	s := strings.NewReplacer(
		"REPLACE_WITH_SLACK_APPROVE_TOKEN", slackToken,
		"REPLACE_WITH_AGENT_TOKEN", rs.Local.Tokens["alice/writer"],
		"REPLACE_WITH_APPROVAL_TOKEN", token,
		"REPLACE_WITH_FORM_TOKEN", signer.FormToken(token),
	).Replace(string(raw))
	return []byte(s)
}

func TestReplayEveryEvent(t *testing.T) {
	files, err := filepath.Glob("../../../events/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no events: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			payload := placeholders(t, raw)
			var probe map[string]json.RawMessage
			if err := json.Unmarshal(payload, &probe); err != nil {
				t.Fatalf("not JSON: %v", err)
			}
			switch {
			case probe["httpMethod"] != nil:
				replayProxy(t, filepath.Base(file), payload)
			case probe["routeKey"] != nil:
				replayHTTPAPI(t, filepath.Base(file), payload)
			case probe["detail-type"] != nil:
				replayEventBridge(t, payload)
			case probe["Records"] != nil:
				fn := streamFunction(t, payload)
				out := invoke(t, fn, payload)
				t.Logf("%s: %s", fn, out)
			default:
				t.Fatalf("%s: not an API Gateway (REST or HTTP API), EventBridge or DynamoDB stream event; add a case here", file)
			}
		})
	}
}

// streamFunction is the function a DynamoDB stream event goes to, by the
// table its records come from: the tasks table's (keys pk, sk) to
// task-events, the steps table's (keys task_id, step_id) to step-expiry.
func streamFunction(t *testing.T, payload []byte) string {
	t.Helper()
	var e struct {
		Records []struct {
			Dynamodb struct {
				Keys map[string]json.RawMessage `json:"Keys"`
			} `json:"dynamodb"`
		} `json:"Records"`
	}
	if err := json.Unmarshal(payload, &e); err != nil || len(e.Records) == 0 {
		t.Fatalf("not a DynamoDB stream event: %v", err)
	}
	keys := e.Records[0].Dynamodb.Keys
	switch {
	case keys["pk"] != nil && keys["sk"] != nil:
		return "task-events"
	case keys["task_id"] != nil && keys["step_id"] != nil:
		return "step-expiry"
	}
	t.Fatalf("stream record keys %v are neither the tasks table's nor the steps table's", keys)
	return ""
}

// invoke calls one function under its emulator (in the SAM mode: by `sam
// local invoke`) and fails on a function error.
func invoke(t *testing.T, fn string, payload []byte) []byte {
	t.Helper()
	if rs.opts.SAM {
		out, err := rs.SAMInvoke(context.Background(), fn, payload)
		if err != nil {
			t.Fatalf("sam local invoke %s: %v", fn, err)
		}
		if isErrorPayload(out) {
			t.Fatalf("%s returned a function error: %s", fn, out)
		}
		return out
	}
	out, err := rs.Invoke(context.Background(), invokeInput(fn, payload))
	if err != nil {
		t.Fatalf("invoke %s: %v", fn, err)
	}
	if out.FunctionError != nil {
		t.Fatalf("%s returned a function error %s: %s", fn, aws.ToString(out.FunctionError), out.Payload)
	}
	return out.Payload
}

// target is the function the custom domain would send a request to.
func target(req events.APIGatewayProxyRequest) string {
	if strings.HasPrefix(req.Path, "/mcp") {
		if req.HTTPMethod == "POST" && req.Headers["Mcp-Method"] == "tools/call" {
			if _, ok := catalog.Lookup(req.Headers["Mcp-Name"]); ok {
				return req.Headers["Mcp-Name"]
			}
		}
		return "mcp"
	}
	if strings.HasPrefix(req.Path, "/slack/") {
		return "slack"
	}
	if strings.HasPrefix(req.Path, "/runner/") {
		return "runner-api"
	}
	if strings.HasPrefix(req.Path, "/oauth/") || strings.HasPrefix(req.Path, "/.well-known/") {
		return "oauth"
	}
	return "web"
}

func replayProxy(t *testing.T, name string, payload []byte) {
	var req events.APIGatewayProxyRequest
	if err := json.Unmarshal(payload, &req); err != nil {
		t.Fatal(err)
	}
	fn := target(req)
	if req.Headers[slack.HeaderSignature] == "REPLACE_WITH_SLACK_SIGNATURE" {
		// Signed as Slack signs it, now.
		ts := strconv.FormatInt(time.Now().Unix(), 10)
		req.Headers[slack.HeaderTimestamp] = ts
		req.Headers[slack.HeaderSignature] = slack.Sign([]byte(rs.SlackSecret), ts, []byte(req.Body))
		var err error
		if payload, err = json.Marshal(req); err != nil {
			t.Fatal(err)
		}
	}
	var resp events.APIGatewayProxyResponse
	if err := json.Unmarshal(invoke(t, fn, payload), &resp); err != nil {
		t.Fatalf("%s: response is not an API Gateway proxy response: %v", fn, err)
	}
	body := resp.Body
	switch name {
	case "mcp-tools-list.json":
		if fn != "mcp" || resp.StatusCode != 200 {
			t.Fatalf("%s answered %d: %.300s", fn, resp.StatusCode, body)
		}
		var r struct {
			Result struct{ Tools []struct{ Name string } }
		}
		if err := json.Unmarshal([]byte(body), &r); err != nil || len(r.Result.Tools) != len(catalog.All()) {
			t.Fatalf("tools/list: %d tools (%v): %.300s", len(r.Result.Tools), err, body)
		}
	case "oauth-authorization-server-metadata.json":
		var m struct {
			AuthorizationEndpoint string   `json:"authorization_endpoint"`
			Methods               []string `json:"code_challenge_methods_supported"`
		}
		if fn != "oauth" || resp.StatusCode != 200 || json.Unmarshal([]byte(body), &m) != nil || !strings.HasSuffix(m.AuthorizationEndpoint, "/oauth/authorize") || strings.Join(m.Methods, ",") != "S256" {
			t.Fatalf("%s answered %d: %.300s", fn, resp.StatusCode, body)
		}
	case "mcp-tools-call.json":
		if fn != "get_task" || resp.StatusCode != 200 {
			t.Fatalf("%s answered %d: %.300s", fn, resp.StatusCode, body)
		}
		var r struct {
			Result struct {
				IsError           bool
				StructuredContent struct {
					Task struct{ ID string } `json:"task"`
				} `json:"structuredContent"`
			}
		}
		if err := json.Unmarshal([]byte(body), &r); err != nil || r.Result.IsError || r.Result.StructuredContent.Task.ID != "example-task-id" {
			t.Fatalf("get_task: %v %.300s", err, body)
		}
	case "web-approval-get.json", "web-approval-post.json":
		// A validly signed link (and, on POST, form token) for a step that
		// does not exist: past the signature and form checks, the page says
		// the step is not there (GET 404) and the decision is refused (POST 409).
		want := map[string]int{"web-approval-get.json": 404, "web-approval-post.json": 409}[name]
		if fn != "web" || resp.StatusCode != want {
			t.Fatalf("%s answered %d, want %d: %.300s", fn, resp.StatusCode, want, body)
		}
		if ct := resp.Headers["Content-Type"] + strings.Join(resp.MultiValueHeaders["Content-Type"], ""); !strings.Contains(ct, "text/html") {
			t.Fatalf("content type %q, want an HTML page", ct)
		}
	case "slack-block-actions.json":
		// alice's click on Approve, signed with the function's secret: the
		// step is approved by alice; the same signed request again is a replay.
		if fn != "slack" || resp.StatusCode != 200 {
			t.Fatalf("%s answered %d, want 200: %.300s", fn, resp.StatusCode, body)
		}
		got, err := fixtureStore.Step(context.Background(), slackStep.TaskID, slackStep.ID)
		if err != nil || got.Status != step.Approved || got.DecidedBy != "alice" {
			t.Fatalf("step after the Slack click = %s by %q (%v), want approved by alice", got.Status, got.DecidedBy, err)
		}
		var again events.APIGatewayProxyResponse
		if err := json.Unmarshal(invoke(t, fn, payload), &again); err != nil || again.StatusCode != 401 {
			t.Fatalf("replayed Slack request answered %d (%v), want 401", again.StatusCode, err)
		}
	case "runner-api-claim.json":
		// alice/writer's runner claims the fixture's wake-up with her agent
		// token: one wake-up, its run token minted for example-task-id.
		if fn != "runner-api" || resp.StatusCode != 200 {
			t.Fatalf("%s answered %d, want 200: %.300s", fn, resp.StatusCode, body)
		}
		var r struct {
			Wakeups []struct {
				ID       string         `json:"id"`
				Delivery wakeup.Payload `json:"delivery"`
			} `json:"wakeups"`
		}
		if err := json.Unmarshal([]byte(body), &r); err != nil || len(r.Wakeups) != 1 {
			t.Fatalf("claim: %v %.300s", err, body)
		}
		c, err := identity.Authenticate(context.Background(), fixtureStore, r.Wakeups[0].Delivery.RunToken, time.Now())
		if err != nil || c.Kind != identity.KindRun || c.Agent != "alice/writer" || c.TaskID != "example-task-id" || c.RunID != r.Wakeups[0].Delivery.RunID {
			t.Fatalf("the claimed run token is %+v (%v)", c, err)
		}
	default:
		if resp.StatusCode >= 500 {
			t.Fatalf("%s answered %d: %.300s", fn, resp.StatusCode, body)
		}
	}
	if resp.StatusCode != 0 { // an HTTP answer (events get none): the cloud's HSTS is on it, once
		if got := append([]string{resp.Headers["Strict-Transport-Security"]}, resp.MultiValueHeaders["Strict-Transport-Security"]...); strings.Join(got, "") != lambdahttp.HSTS {
			t.Fatalf("%s: Strict-Transport-Security %q, want %q once", fn, got, lambdahttp.HSTS)
		}
	}
	t.Logf("%s → %s: %d", name, fn, resp.StatusCode)
}

// replayHTTPAPI sends an HTTP API (payload 2.0) sample to the function the
// HttpApi routes it to (ApiGateway=http: /mcp → mcp, which hands a tool
// call on by Lambda Invoke) and asserts the 2.0 response. A form body is
// kept readable in the sample (its placeholders) and base64-encoded here,
// as the HTTP API delivers non-text bodies.
func replayHTTPAPI(t *testing.T, name string, payload []byte) {
	var req events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(payload, &req); err != nil {
		t.Fatal(err)
	}
	fn := "web"
	switch {
	case req.RawPath == "/mcp":
		fn = "mcp"
	case strings.HasPrefix(req.RawPath, "/slack/"):
		fn = "slack"
	}
	if req.Headers["content-type"] == "application/x-www-form-urlencoded" && !req.IsBase64Encoded {
		req.Body, req.IsBase64Encoded = base64.StdEncoding.EncodeToString([]byte(req.Body)), true
		var err error
		if payload, err = json.Marshal(req); err != nil {
			t.Fatal(err)
		}
	}
	before := rs.Counts()
	raw := invoke(t, fn, payload)
	var resp events.APIGatewayV2HTTPResponse
	if err := json.Unmarshal(raw, &resp); err != nil || resp.StatusCode == 0 {
		t.Fatalf("%s: response is not an HTTP API 2.0 response (%v): %.300s", fn, err, raw)
	}
	var v1 struct {
		MultiValueHeaders map[string][]string `json:"multiValueHeaders"`
	}
	if json.Unmarshal(raw, &v1) == nil && v1.MultiValueHeaders != nil {
		t.Errorf("%s answered a REST (1.0) response to a 2.0 event: %.300s", fn, raw)
	}
	after := rs.Counts()
	switch name {
	case "httpapi-mcp-tools-call.json":
		var r struct {
			Result struct {
				IsError           bool
				StructuredContent struct {
					Task struct{ ID string } `json:"task"`
				} `json:"structuredContent"`
			}
		}
		if err := json.Unmarshal([]byte(resp.Body), &r); err != nil || resp.StatusCode != 200 || r.Result.IsError || r.Result.StructuredContent.Task.ID != "example-task-id" {
			t.Fatalf("mcp answered %d (%v): %.300s", resp.StatusCode, err, resp.Body)
		}
		if d := after["get_task"] - before["get_task"]; d != 1 {
			t.Fatalf("mcp handed the call to get_task %d times, want 1", d)
		}
	case "httpapi-web-approval-post.json":
		// As web-approval-post.json: past the signature and the form token
		// (decoded from base64), the decision on a missing step is refused.
		if resp.StatusCode != 409 || !strings.Contains(resp.Headers["Content-Type"], "text/html") {
			t.Fatalf("web answered %d %q, want 409 text/html: %.300s", resp.StatusCode, resp.Headers["Content-Type"], resp.Body)
		}
	default:
		if resp.StatusCode >= 500 {
			t.Fatalf("%s answered %d: %.300s", fn, resp.StatusCode, resp.Body)
		}
	}
	t.Logf("%s → %s: %d", name, fn, resp.StatusCode)
}

func replayEventBridge(t *testing.T, payload []byte) {
	var cw events.CloudWatchEvent
	if err := json.Unmarshal(payload, &cw); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range rs.rules {
		if !matches(r, cw.Source, cw.DetailType) {
			continue
		}
		f := rs.byLogical[r.Function]
		if f == nil {
			t.Fatalf("rule %s targets %s, which is not running", r.Name, r.Function)
		}
		invoke(t, f.Name, payload)
		t.Logf("%s → %s: ok", cw.DetailType, f.Name)
		n++
	}
	if n == 0 {
		t.Fatalf("no rule of template.yaml matches %q from %q", cw.DetailType, cw.Source)
	}
}
