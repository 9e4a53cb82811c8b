// Package lambdahttp runs Prickle's HTTP handlers inside AWS Lambda behind
// API Gateway, a REST API (proxy events, payload 1.0) or an HTTP API (payload
// 2.0), so the handler a laptop serves is the one AWS runs in either mode.
package lambdahttp

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"
	"github.com/useprickle/prickle/shared/aws/lambdamain"
)

// HSTS is the Strict-Transport-Security of every response in the cloud: API
// Gateway serves only https, so browsers are told to use nothing else for
// two years on that host and its subdomains (no preload: that is the
// operator's choice for their domain).
const HSTS = "max-age=63072000; includeSubDomains"

// Secure wraps h so that every response carries HSTS; only Start uses it,
// so the local stack (plain http on loopback, where browsers ignore the
// header anyway) does not send it.
func Secure(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Strict-Transport-Security", HSTS)
		h.ServeHTTP(w, r)
	})
}

// Start serves h as a Lambda function receiving API Gateway events of
// either payload version, every response with HSTS; it never returns.
func Start(h http.Handler) {
	lambda.Start(New(Secure(h)))
}

// Run is an HTTP function's main (lambdamain.Start): the handler build
// makes from the environment, served as Start serves it. It never returns.
func Run(build func(ctx context.Context, log *slog.Logger) (http.Handler, error)) {
	lambdamain.Start(func(ctx context.Context, log *slog.Logger) (any, error) {
		h, err := build(ctx, log)
		if err != nil {
			return nil, err
		}
		return New(Secure(h)), nil
	})
}

// Handler is a lambda.Handler that serves one http.Handler to both API
// Gateway payload versions, so the template's ApiGateway parameter can put
// a REST or an HTTP API in front of the same binary.
type Handler struct {
	v1 *httpadapter.HandlerAdapter
	v2 *httpadapter.HandlerAdapterV2
}

// New adapts h to Lambda invocations carrying API Gateway events.
func New(h http.Handler) Handler {
	return Handler{v1: httpadapter.New(h), v2: httpadapter.NewV2(h)}
}

// Invoke decodes the event by its payload version ("2.0" is an HTTP API
// event; REST API proxy events carry none) and answers in the same version.
func (a Handler) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	var probe struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(payload, &probe); err != nil {
		return nil, fmt.Errorf("decode API Gateway event: %w", err)
	}
	if probe.Version == "2.0" {
		return proxy(ctx, payload, "HTTP API", a.v2.ProxyWithContext)
	}
	return proxy(ctx, payload, "REST API", a.v1.ProxyWithContext)
}

// proxy decodes a kind of API Gateway event, serves it and encodes the answer.
func proxy[Req, Resp any](ctx context.Context, payload []byte, kind string, serve func(context.Context, Req) (Resp, error)) ([]byte, error) {
	var req Req
	if err := json.Unmarshal(payload, &req); err != nil {
		return nil, fmt.Errorf("decode %s event: %w", kind, err)
	}
	out, err := serve(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("serve %s event: %w", kind, err)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("encode API Gateway response: %w", err)
	}
	return b, nil
}
