package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
)

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

func invokeInput(name string, payload []byte) *lambda.InvokeInput {
	return &lambda.InvokeInput{FunctionName: aws.String(name), Payload: payload}
}
