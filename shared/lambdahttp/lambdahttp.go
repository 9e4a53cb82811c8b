// Package lambdahttp runs Prickle's HTTP handlers inside AWS Lambda behind
// API Gateway REST APIs, so the handler a laptop serves is the one AWS runs.
package lambdahttp

import (
	"net/http"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"
)

// Start serves h as a Lambda function receiving API Gateway proxy events; it never returns.
func Start(h http.Handler) {
	lambda.Start(httpadapter.New(h).ProxyWithContext)
}
