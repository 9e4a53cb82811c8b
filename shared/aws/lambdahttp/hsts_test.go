package lambdahttp_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/auth/link"
	"github.com/useprickle/prickle/shared/aws/lambdahttp"
	"github.com/useprickle/prickle/shared/mcp/endpoint"
	"github.com/useprickle/prickle/shared/owners/web"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/teamtest"
)

type noTokens struct{}

func (noTokens) TokenByHash(context.Context, string) (identity.Token, error) {
	return identity.Token{}, identity.ErrUnknownToken
}

// TestEveryCloudResponseCarriesHSTS: a web page, a refused approval link
// and /mcp (served or refused) answer through the Lambda adapter with
// Strict-Transport-Security, which API Gateway only ever serves over
// https; the same handlers on the local http stack do not send it.
func TestEveryCloudResponseCarriesHSTS(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	pages := web.New(web.Config{Store: teamtest.New(), Signer: link.Signer{Key: []byte("0123456789abcdef0123456789abcdef")}, Log: quiet})
	mcp, err := endpoint.New(endpoint.Config{Service: team.New(teamtest.New()), Tokens: noTokens{}, Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		h       http.Handler
		method  string
		path    string
		headers map[string]string
		status  int
	}{
		{"tool reference", pages, "GET", "/docs/reference/mcp-tools", nil, http.StatusOK},
		{"tampered approval link", pages, "GET", "/a/junk.junk", nil, http.StatusForbidden},
		{"mcp without a token", mcp, "POST", "/mcp", map[string]string{"Content-Type": "application/json"}, http.StatusUnauthorized},
		{"mcp from a foreign origin", mcp, "POST", "/mcp", map[string]string{"Origin": "https://evil.example"}, http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := events.APIGatewayProxyRequest{HTTPMethod: tc.method, Path: tc.path, Headers: tc.headers, Body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`}
			resp, err := httpadapter.New(lambdahttp.Secure(tc.h)).ProxyWithContext(context.Background(), ev)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.status {
				t.Fatalf("HTTP %d, want %d: %.200s", resp.StatusCode, tc.status, resp.Body)
			}
			got := resp.MultiValueHeaders["Strict-Transport-Security"]
			if len(got) != 1 || got[0] != lambdahttp.HSTS {
				t.Errorf("Strict-Transport-Security = %q, want [%q]", got, lambdahttp.HSTS)
			}

			local := httptest.NewRecorder()
			tc.h.ServeHTTP(local, httptest.NewRequest(tc.method, "http://127.0.0.1:3000"+tc.path, nil))
			if v := local.Header().Get("Strict-Transport-Security"); v != "" {
				t.Errorf("the local http stack sent Strict-Transport-Security %q", v)
			}
		})
	}
}
