package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/useprickle/prickle/shared/step"
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
