package template

import (
	"os"
	"strings"
	"testing"
)

// templatePath is template.yaml at the repository root; PRICKLE_TEMPLATE
// checks another file (e.g. a copy with a deliberate excess grant).
func templatePath() string {
	if p := os.Getenv("PRICKLE_TEMPLATE"); p != "" {
		return p
	}
	return "../../../template.yaml"
}

var tools = []string{
	"ReadRoomFunction", "GetTaskFunction", "HandOffTaskFunction", "AcceptTaskFunction",
	"DeclineTaskFunction", "SaveCheckpointFunction", "RequestStepFunction",
	"ReturnResultFunction", "ReviewResultFunction", "CancelTaskFunction", "UpdatePulseFunction",
}

const (
	tasks, steps, pulse, directory, wakeups, oauth = "TasksTable", "StepsTable", "PulseTable", "DirectoryTable", "WakeupsTable", "OAuthTable"
)

// need is what each function needs, read from shared/team (which tool
// writes what) and the event-driven functions' packages. It is the
// contract: a grant beyond it fails the test.
var need = map[string]Rights{
	"McpFunction":            {MCP: true, Reads: []string{directory}, Invokes: tools},
	"ReadRoomFunction":       {MCP: true, Reads: []string{directory, tasks, pulse}},
	"GetTaskFunction":        {MCP: true, Reads: []string{directory, tasks}},
	"HandOffTaskFunction":    {MCP: true, Reads: []string{directory, tasks}, Writes: []string{tasks}, Publishes: true},
	"AcceptTaskFunction":     {MCP: true, Reads: []string{directory, tasks}, Writes: []string{tasks}},
	"DeclineTaskFunction":    {MCP: true, Reads: []string{directory, tasks}, Writes: []string{tasks}},
	"SaveCheckpointFunction": {MCP: true, Reads: []string{directory, tasks}, Writes: []string{tasks}},
	"CancelTaskFunction":     {MCP: true, Reads: []string{directory, tasks}, Writes: []string{tasks}},
	"RequestStepFunction":    {MCP: true, Reads: []string{directory, tasks, steps}, Writes: []string{tasks, steps}, Publishes: true},
	"ReturnResultFunction":   {MCP: true, Reads: []string{directory, tasks}, Writes: []string{tasks}, Publishes: true},
	"ReviewResultFunction":   {MCP: true, Reads: []string{directory, tasks}, Writes: []string{tasks}, Publishes: true},
	// update_pulse with task_id checks the task's project in its put's transaction.
	"UpdatePulseFunction": {MCP: true, Reads: []string{directory, tasks}, Writes: []string{pulse}, Checks: []string{tasks}},
	// web decides steps and results from approval links (single-use links
	// and dedup records live in the directory) and shows Team Pulse; sign
	// out everywhere lists and revokes the owner's OAuth grants (oauth) and
	// their access tokens (directory).
	"WebFunction": {Reads: []string{directory, tasks, steps, pulse, oauth}, Writes: []string{directory, tasks, steps, oauth}, Publishes: true, Secrets: true},
	// oauth keeps clients, codes, refresh tokens and consents
	// (oauth), stores access tokens and new agents and reads sessions
	// (directory, TOKEN#, AGENT# and membership keys), and reads the signing key for session cookies;
	// a runner joined by the device grant gets an agent token with its audit entry (tasks, AUDIT# keys only).
	"OauthFunction": {Reads: []string{directory, oauth}, Writes: []string{directory, oauth, tasks}, Secrets: true},
	// slack decides steps and results from Slack's buttons as web does; its
	// one directory write is its replay markers (PutItem on SLACKREQ# keys only).
	"SlackFunction": {Reads: []string{directory, tasks, steps}, Writes: []string{directory, tasks, steps}, Publishes: true, Secrets: true},
	// notify signs approval links, remembers sent messages and Slack refs in the directory.
	"NotifyFunction": {Reads: []string{directory, tasks, steps}, Writes: []string{directory}, Email: true, Secrets: true, Queues: []string{"FunctionsDeadLetterQueue"}},
	// wake mints run tokens and records wake attempts (directory), appends the audit entry of each token (tasks, AUDIT# keys only),
	// and stores the wake-ups of agents with no webhook for pull (wakeups, PutItem only).
	"WakeupFunction": {Reads: []string{directory, tasks, steps}, Writes: []string{directory, tasks, wakeups}, Queues: []string{"FunctionsDeadLetterQueue"}},
	// runner claims and acknowledges wake-ups (wakeups), reads the caller's token and the task (directory, tasks), and mints
	// run tokens as it claims (directory, TOKEN# keys only) with their audit entries (tasks, AUDIT# keys only); it counts
	// runs' model usage (tasks, RUNSPEND# and MODELSPEND# keys only) and asks owners whose agents reached their cap (events).
	"RunnerApiFunction": {Reads: []string{directory, tasks, wakeups}, Writes: []string{directory, tasks, wakeups}, Publishes: true},
	"RouteFunction":     {Reads: []string{directory, tasks}, Writes: []string{directory, tasks}, Publishes: true, Queues: []string{"FunctionsDeadLetterQueue"}},
	// task-events files the history line of each move (PutItem of HIST# keys) and reads it back for older records.
	"TaskEventsFunction": {Reads: []string{tasks}, Writes: []string{tasks}, Publishes: true, Stream: tasks, Queues: []string{"FunctionsDeadLetterQueue"}},
	"StepExpiryFunction": {Reads: []string{directory, tasks, steps}, Writes: []string{directory, tasks, steps}, Publishes: true, Stream: steps, Queues: []string{"FunctionsDeadLetterQueue"}},
}

func load(t *testing.T) *Template {
	t.Helper()
	tpl, err := Load(templatePath())
	if err != nil {
		t.Fatal(err)
	}
	return tpl
}

// TestLeastPrivilege is the contract: every function gets only what it
// needs (no write on a table it does not write, no "*" resource on a data
// action, only notify sends email, only mcp invokes, only the tools).
func TestLeastPrivilege(t *testing.T) {
	for _, v := range Check(load(t), need) {
		t.Error(v)
	}
}

// TestEveryFunctionIsCovered: the template declares exactly the functions of the design.
func TestEveryFunctionIsCovered(t *testing.T) {
	got := strings.Join(load(t).Functions(), " ")
	for fn := range need {
		if !strings.Contains(got, fn) {
			t.Errorf("template has no %s", fn)
		}
	}
	if n := len(load(t).Functions()); n != len(need) {
		t.Errorf("template declares %d functions, the rights table %d", n, len(need))
	}
}

// TestCheckCatchesExcessGrants proves the checker is not vacuous: each
// mutation of the real template must be reported.
func TestCheckCatchesExcessGrants(t *testing.T) {
	wild := map[string]any{"Sid": "Everything", "Effect": "Allow", "Action": "dynamodb:*", "Resource": "*"}
	cases := []struct {
		name, fn string
		stmt     map[string]any
		want     string
	}{
		{"dynamodb:* on * for a read tool", "GetTaskFunction", wild, `grants dynamodb:* on resource "*"`},
		{"write on a table the tool does not write", "UpdatePulseFunction",
			map[string]any{"Sid": "X", "Effect": "Allow", "Action": "dynamodb:PutItem", "Resource": map[string]any{"Fn::GetAtt": "TasksTable.Arn"}},
			"does not write TasksTable"},
		{"a condition check on a table the tool does not check", "UpdatePulseFunction",
			map[string]any{"Sid": "X", "Effect": "Allow", "Action": "dynamodb:ConditionCheckItem", "Resource": map[string]any{"Fn::GetAtt": "StepsTable.Arn"}},
			"does not write StepsTable"},
		{"a wildcard write on a table the tool only checks", "UpdatePulseFunction",
			map[string]any{"Sid": "X", "Effect": "Allow", "Action": "dynamodb:*Item", "Resource": map[string]any{"Fn::GetAtt": "TasksTable.Arn"}},
			"does not write TasksTable"},
		{"email from a tool", "ReturnResultFunction",
			map[string]any{"Sid": "X", "Effect": "Allow", "Action": "ses:SendEmail", "Resource": map[string]any{"Fn::Sub": "arn:aws:ses:us-east-1:1:identity/*"}},
			"only notify sends email"},
		{"a tool invoking another tool", "ReviewResultFunction",
			map[string]any{"Sid": "X", "Effect": "Allow", "Action": "lambda:InvokeFunction", "Resource": map[string]any{"Fn::GetAtt": "ReadRoomFunction.Arn"}},
			"only mcp invokes"},
		{"a tool writing the wake-ups", "AcceptTaskFunction",
			map[string]any{"Sid": "X", "Effect": "Allow", "Action": "dynamodb:UpdateItem", "Resource": map[string]any{"Fn::GetAtt": "WakeupsTable.Arn"}},
			"does not write WakeupsTable"},
		{"the runner reading the steps", "RunnerApiFunction",
			map[string]any{"Sid": "X", "Effect": "Allow", "Action": "dynamodb:GetItem", "Resource": map[string]any{"Fn::GetAtt": "StepsTable.Arn"}},
			"StepsTable"},
		{"a read tool publishing", "ReadRoomFunction",
			map[string]any{"Sid": "X", "Effect": "Allow", "Action": "events:PutEvents", "Resource": map[string]any{"Fn::GetAtt": "EventBus.Arn"}},
			"only publishers"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tpl := load(t)
			fn := tpl.Resources[c.fn]
			pols := fn.Properties["Policies"].([]any)
			doc := pols[0].(map[string]any)
			stmts := append([]any{}, doc["Statement"].([]any)...)
			doc2 := map[string]any{"Version": doc["Version"], "Statement": append(stmts, c.stmt)}
			props := map[string]any{}
			for k, v := range fn.Properties {
				props[k] = v
			}
			props["Policies"] = []any{doc2}
			tpl.Resources[c.fn] = Resource{Type: fn.Type, Properties: props}
			found := false
			for _, v := range Check(tpl, need) {
				found = found || (strings.HasPrefix(v, c.fn+":") && strings.Contains(v, c.want))
			}
			if !found {
				t.Errorf("%s: the checker missed %q: %v", c.fn, c.want, Check(tpl, need))
			}
		})
	}
}

// TestSAMPolicyTemplatesAndManagedPoliciesAreRefused: rights must be explicit statements.
func TestSAMPolicyTemplatesAndManagedPoliciesAreRefused(t *testing.T) {
	tpl, err := Parse([]byte(`
Resources:
  McpFunction:
    Type: AWS::Serverless::Function
    Properties:
      Policies:
        - DynamoDBCrudPolicy: {TableName: !Ref TasksTable}
        - AmazonDynamoDBFullAccess
`))
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(Check(tpl, map[string]Rights{"McpFunction": need["McpFunction"]}), "\n")
	for _, want := range []string{"SAM policy template", "managed policy AmazonDynamoDBFullAccess"} {
		if !strings.Contains(got, want) {
			t.Errorf("want %q in:\n%s", want, got)
		}
	}
}
