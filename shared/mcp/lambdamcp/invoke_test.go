package lambdamcp_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/useprickle/prickle/shared/mcp/lambdamcp"
)

// invoker is a fake Lambda: it keeps the input it was invoked with and
// answers with a canned output or error.
type invoker struct {
	in  *awslambda.InvokeInput
	out *awslambda.InvokeOutput
	err error
}

func (f *invoker) Invoke(_ context.Context, in *awslambda.InvokeInput, _ ...func(*awslambda.Options)) (*awslambda.InvokeOutput, error) {
	f.in = in
	return f.out, f.err
}

func proxyResponse(t *testing.T, r events.APIGatewayProxyResponse) *awslambda.InvokeOutput {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return &awslambda.InvokeOutput{Payload: b}
}

// TestForward: the front hands the caller's request to the tool's function
// as the API Gateway proxy event that function would get (method, path,
// every header, the body unchanged), and answers with the function's
// response; when the function cannot be reached, fails (a FunctionError:
// it panicked or timed out) or answers what is not a proxy response, the
// caller gets 502 with a JSON-RPC error, never the function's error text.
func TestForward(t *testing.T) {
	const call = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_task","arguments":{"task_id":"tsk_1"}}}`
	tests := []struct {
		name     string
		out      func(*testing.T) *awslambda.InvokeOutput
		err      error
		status   int
		body     string
		bodyHas  string
		wantType string
	}{
		{name: "the tool answers", out: func(t *testing.T) *awslambda.InvokeOutput {
			return proxyResponse(t, events.APIGatewayProxyResponse{StatusCode: 200, Headers: map[string]string{"Content-Type": "application/json"}, Body: `{"ok":true}`})
		}, status: 200, body: `{"ok":true}`, wantType: "application/json"},
		{name: "a base64 body", out: func(t *testing.T) *awslambda.InvokeOutput {
			return proxyResponse(t, events.APIGatewayProxyResponse{StatusCode: 202, Body: base64.StdEncoding.EncodeToString([]byte(`{"b64":1}`)), IsBase64Encoded: true})
		}, status: 202, body: `{"b64":1}`},
		{name: "a body that is not base64", out: func(t *testing.T) *awslambda.InvokeOutput {
			return proxyResponse(t, events.APIGatewayProxyResponse{StatusCode: 200, Body: "!!!", IsBase64Encoded: true})
		}, status: 502, bodyHas: "bad body from the tool's function"},
		{name: "a FunctionError", out: func(*testing.T) *awslambda.InvokeOutput {
			return &awslambda.InvokeOutput{FunctionError: aws.String("Unhandled"), Payload: []byte(`{"errorMessage":"secret stack trace","errorType":"runtime.Error"}`)}
		}, status: 502, bodyHas: `"code":-32603`},
		{name: "the invoke fails", err: errors.New("AccessDeniedException: not allowed"), status: 502, bodyHas: `"code":-32603`},
		{name: "not a proxy response", out: func(*testing.T) *awslambda.InvokeOutput {
			return &awslambda.InvokeOutput{Payload: []byte(`"just a string"`)}
		}, status: 502, bodyHas: `"code":-32603`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &invoker{err: tt.err}
			if tt.out != nil {
				f.out = tt.out(t)
			}
			req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(call))
			req.Header.Set("Authorization", "Bearer prk_a_writer")
			req.Header.Add("Accept", "application/json")
			req.Header.Add("Accept", "text/event-stream")
			w := httptest.NewRecorder()
			lambdamcp.Forward{Lambda: f, Function: "prickle-dev-get_task"}.ServeHTTP(w, req)

			if f.in == nil || aws.ToString(f.in.FunctionName) != "prickle-dev-get_task" {
				t.Fatalf("invoked %+v, want prickle-dev-get_task", f.in)
			}
			var ev events.APIGatewayProxyRequest
			if err := json.Unmarshal(f.in.Payload, &ev); err != nil {
				t.Fatalf("payload is not a proxy event: %v", err)
			}
			if ev.HTTPMethod != http.MethodPost || ev.Path != "/mcp" || ev.Body != call ||
				ev.Headers["Authorization"] != "Bearer prk_a_writer" || ev.Headers["Accept"] != "application/json,text/event-stream" ||
				strings.Join(ev.MultiValueHeaders["Accept"], "|") != "application/json|text/event-stream" {
				t.Errorf("proxy event %+v is not the caller's request", ev)
			}
			if w.Code != tt.status {
				t.Fatalf("HTTP %d %s, want %d", w.Code, w.Body.String(), tt.status)
			}
			if tt.body != "" && w.Body.String() != tt.body {
				t.Errorf("body %q, want %q", w.Body.String(), tt.body)
			}
			if !strings.Contains(w.Body.String(), tt.bodyHas) {
				t.Errorf("body %q does not hold %q", w.Body.String(), tt.bodyHas)
			}
			if strings.Contains(w.Body.String(), "secret stack trace") || strings.Contains(w.Body.String(), "AccessDenied") {
				t.Errorf("body %q tells the caller the function's error", w.Body.String())
			}
			if tt.wantType != "" && w.Header().Get("Content-Type") != tt.wantType {
				t.Errorf("Content-Type %q, want %q", w.Header().Get("Content-Type"), tt.wantType)
			}
		})
	}
}
