package lambdahttp_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/useprickle/prickle/shared/auth/session"
	"github.com/useprickle/prickle/shared/aws/lambdahttp"
)

// TestSignInClientIsAPIGatewaysSourceIP: behind API Gateway the sign-in
// allowance is counted under requestContext.identity.sourceIp, never under
// an X-Forwarded-For the client wrote itself.
func TestSignInClientIsAPIGatewaysSourceIP(t *testing.T) {
	var got string
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = session.Client(r)
		w.WriteHeader(http.StatusNoContent)
	})
	ev := events.APIGatewayProxyRequest{
		HTTPMethod: "POST", Path: "/signin",
		Headers:        map[string]string{"X-Forwarded-For": "198.51.100.1, 203.0.113.7"},
		RequestContext: events.APIGatewayProxyRequestContext{Identity: events.APIGatewayRequestIdentity{SourceIP: "203.0.113.7"}},
	}
	if _, err := httpadapter.New(lambdahttp.Secure(h)).ProxyWithContext(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	if got != "203.0.113.7" {
		t.Errorf("client = %q, want the source IP 203.0.113.7", got)
	}
}
