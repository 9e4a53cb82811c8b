// Package lambdahttp runs Prickle's HTTP handlers inside AWS Lambda behind
// API Gateway REST APIs, so the handler a laptop serves is the one AWS runs.
package lambdahttp

import (
	"net/http"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"
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

// Start serves h as a Lambda function receiving API Gateway proxy events; it never returns.
func Start(h http.Handler) {
	lambda.Start(httpadapter.New(Secure(h)).ProxyWithContext)
}
