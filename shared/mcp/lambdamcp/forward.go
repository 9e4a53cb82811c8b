package lambdamcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
)

// Invoker is the one Lambda call forwarding needs; *lambda.Client has it.
type Invoker interface {
	Invoke(ctx context.Context, in *lambda.InvokeInput, opts ...func(*lambda.Options)) (*lambda.InvokeOutput, error)
}

// Forward is an http.Handler that serves a request by invoking another
// function with the API Gateway proxy event that function would get from its
// own API: the mcp front uses it to hand an older client's tool call to the
// tool's function, which authenticates the caller again with its own rights.
type Forward struct {
	Lambda   Invoker
	Function string // name or ARN
}

func (f Forward) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	resp, err := f.invoke(r)
	if err != nil {
		slog.ErrorContext(r.Context(), "hand-off to tool function failed", "function", f.Function, "error", err.Error())
		http.Error(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"the tool's function could not be reached; try again"}}`, http.StatusBadGateway)
		return
	}
	for k, v := range resp.Headers {
		w.Header().Set(k, v)
	}
	// The tool's headers replace the front's own (Strict-Transport-Security
	// is set by both), so each is sent as the tool sent it, once.
	for k, vs := range resp.MultiValueHeaders {
		w.Header()[http.CanonicalHeaderKey(k)] = slices.Clone(vs)
	}
	body := []byte(resp.Body)
	if resp.IsBase64Encoded {
		if body, err = base64.StdEncoding.DecodeString(resp.Body); err != nil {
			http.Error(w, "bad body from the tool's function", http.StatusBadGateway)
			return
		}
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(body)
}

func (f Forward) invoke(r *http.Request) (events.APIGatewayProxyResponse, error) {
	var out events.APIGatewayProxyResponse
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return out, fmt.Errorf("read request: %w", err)
	}
	req := events.APIGatewayProxyRequest{
		Resource: r.URL.Path, Path: r.URL.Path, HTTPMethod: r.Method,
		Headers: map[string]string{}, MultiValueHeaders: map[string][]string{},
		QueryStringParameters: map[string]string{}, Body: string(body),
	}
	for k, vs := range r.Header {
		req.Headers[k] = strings.Join(vs, ",")
		req.MultiValueHeaders[k] = vs
	}
	payload, err := json.Marshal(req)
	if err != nil {
		return out, fmt.Errorf("encode proxy event: %w", err)
	}
	res, err := f.Lambda.Invoke(r.Context(), &lambda.InvokeInput{FunctionName: aws.String(f.Function), Payload: payload})
	if err != nil {
		return out, fmt.Errorf("invoke %s: %w", f.Function, err)
	}
	if res.FunctionError != nil {
		return out, fmt.Errorf("%s failed: %s", f.Function, aws.ToString(res.FunctionError))
	}
	if err := json.Unmarshal(res.Payload, &out); err != nil {
		return out, fmt.Errorf("decode %s response: %w", f.Function, err)
	}
	return out, nil
}
