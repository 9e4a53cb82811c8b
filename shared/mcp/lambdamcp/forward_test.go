package lambdamcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/useprickle/prickle/shared/aws/lambdahttp"
	"github.com/useprickle/prickle/shared/mcp/lambdamcp"
)

// function runs a handler as a Lambda function would: the payload is an
// API Gateway proxy event, the answer its proxy response.
type function struct{ h http.Handler }

func (f function) Invoke(ctx context.Context, in *awslambda.InvokeInput, _ ...func(*awslambda.Options)) (*awslambda.InvokeOutput, error) {
	var ev events.APIGatewayProxyRequest
	if err := json.Unmarshal(in.Payload, &ev); err != nil {
		return nil, err
	}
	resp, err := httpadapter.New(lambdahttp.Secure(f.h)).ProxyWithContext(ctx, ev)
	if err != nil {
		return nil, err
	}
	out, err := json.Marshal(resp)
	return &awslambda.InvokeOutput{Payload: out}, err
}

// TestForwardKeepsOneHeaderValue: the front (itself behind lambdahttp.Secure)
// hands a call to a tool's function; the tool's headers replace the front's,
// so the answer carries Strict-Transport-Security once and the tool's own
// headers as the tool sent them.
func TestForwardKeepsOneHeaderValue(t *testing.T) {
	tool := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Add("Vary", "Origin")
		w.Header().Add("Vary", "Accept")
		w.WriteHeader(http.StatusTeapot)
		_, _ = w.Write([]byte(`{"tool":"` + r.Header.Get("Mcp-Name") + `"}`))
	})
	front := lambdahttp.Secure(lambdamcp.Forward{Lambda: function{tool}, Function: "prickle-dev-get_task"})
	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{}`))
	req.Header.Set("Mcp-Name", "get_task")
	w := httptest.NewRecorder()
	front.ServeHTTP(w, req)
	if w.Code != http.StatusTeapot || w.Body.String() != `{"tool":"get_task"}` {
		t.Fatalf("HTTP %d %s, want the tool's answer", w.Code, w.Body.String())
	}
	if got := w.Header().Values("Strict-Transport-Security"); len(got) != 1 || got[0] != lambdahttp.HSTS {
		t.Errorf("Strict-Transport-Security = %q, want once", got)
	}
	if got := w.Header().Values("Vary"); strings.Join(got, ",") != "Origin,Accept" {
		t.Errorf("Vary = %q, want the tool's two values once each", got)
	}
	if got := w.Header().Values("Content-Type"); len(got) != 1 {
		t.Errorf("Content-Type = %q, want once", got)
	}
}
