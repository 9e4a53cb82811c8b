package web_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/owners/web"
	"github.com/useprickle/prickle/shared/team/teamtest"
)

// TestSameOriginWithoutBaseURL: with no PUBLIC_BASE_URL (the cloud without a
// custom domain) the pages compare Origin with the host the request came
// to, so a form posted from another site is still refused and the page's
// own form still decides.
func TestSameOriginWithoutBaseURL(t *testing.T) {
	st := teamtest.New()
	st.AddProject(project)
	st.AddAgent(writer)
	st.AddAgent(review)
	e := newEnv(t, st) // newEnv configures no BaseURL
	s := e.pendingStep("tsk_origin")
	u := e.stepLink(s)
	csrf := csrfOf(t, e.get(u))
	postFrom := func(origin string) response {
		form := url.Values{"csrf": {csrf}, "decision": {"approve"}}
		req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", origin)
		return e.do(req)
	}

	for _, foreign := range []string{"http://evil.example", strings.Replace(e.srv.URL, "http://", "https://", 1), e.srv.URL + ".evil.example"} {
		if r := postFrom(foreign); r.status != http.StatusForbidden || !strings.Contains(r.body, "sent from another site") {
			t.Fatalf("POST from %s = %d, want 403:\n%s", foreign, r.status, r.body)
		}
	}
	if got := e.stepStatus(s); got.Status != step.Pending {
		t.Fatalf("a foreign POST decided the step: %+v", got)
	}
	if r := postFrom(e.srv.URL); r.status != http.StatusOK || !strings.HasSuffix(r.url, "?done=1") {
		t.Fatalf("POST from the page's own origin = %d at %s:\n%s", r.status, r.url, r.body)
	}
	if got := e.stepStatus(s); got.Status != step.Approved {
		t.Fatalf("the page's own POST did not decide: %+v", got)
	}
}

// TestSameOriginBehindAPIGateway: in the cloud without a custom domain the
// web function has no BaseURL and gets API Gateway proxy events; the origin
// it compares with is the event's domain name (as the Lambda adapter builds
// the request), not a Host or X-Forwarded-Host header the client chose.
func TestSameOriginBehindAPIGateway(t *testing.T) {
	st := teamtest.New()
	st.AddProject(project)
	st.AddAgent(writer)
	st.AddAgent(review)
	e := newEnv(t, st)
	s := e.pendingStep("tsk_origin_apigw")
	u, err := url.Parse(e.stepLink(s))
	if err != nil {
		t.Fatal(err)
	}
	csrf := csrfOf(t, e.get(u.String()))
	adapter := httpadapter.New(web.New(web.Config{Service: e.svc, Store: e.store, Signer: signer, Now: e.clock.now, Log: slog.New(slog.DiscardHandler)}))
	const domain = "abc123.execute-api.us-east-1.amazonaws.com"
	postFrom := func(origin string) int {
		t.Helper()
		resp, err := adapter.ProxyWithContext(context.Background(), events.APIGatewayProxyRequest{
			HTTPMethod: http.MethodPost, Path: u.Path,
			Headers: map[string]string{
				"Content-Type": "application/x-www-form-urlencoded", "Origin": origin,
				"Host": "evil.example", "X-Forwarded-Host": "evil.example",
			},
			Body:           url.Values{"csrf": {csrf}, "decision": {"approve"}}.Encode(),
			RequestContext: events.APIGatewayProxyRequestContext{DomainName: domain},
		})
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode
	}
	if got := postFrom("http://evil.example"); got != http.StatusForbidden {
		t.Fatalf("POST from a foreign origin behind API Gateway = %d, want 403", got)
	}
	if got := e.stepStatus(s); got.Status != step.Pending {
		t.Fatalf("a foreign POST decided the step: %+v", got)
	}
	if got := postFrom("https://" + domain); got != http.StatusSeeOther {
		t.Fatalf("POST from the API's own origin = %d, want 303", got)
	}
	if got := e.stepStatus(s); got.Status != step.Approved {
		t.Fatalf("the page's own POST did not decide: %+v", got)
	}
}
