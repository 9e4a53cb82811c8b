package storetest

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestAnswerLastSparesTheSDKsLastAttempt: a rule with AnswerLast loses the
// answers of a call's earlier attempts but never its last one, so the SDK's
// retry always recovers; without it, the last attempt is lost too.
func TestAnswerLastSparesTheSDKsLastAttempt(t *testing.T) {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("{}"))
	}))
	defer upstream.Close()
	cases := []struct {
		name       string
		answerLast bool
		header     string
		answered   bool
	}{
		{"first attempt", true, "attempt=1; max=3", false},
		{"a middle attempt", true, "attempt=2; max=3", false},
		{"the last attempt", true, "attempt=3; max=3", true},
		{"the only attempt", true, "attempt=1; max=1", true},
		{"no header", true, "", false},
		{"the last attempt, without AnswerLast", false, "attempt=3; max=3", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Start(upstream.URL)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			p.Inject(Rule{Fault: ResetAnswer, Writes: true, AnswerLast: c.answerLast})
			req, _ := http.NewRequest(http.MethodPost, p.URL, strings.NewReader("{}"))
			req.Header.Set("X-Amz-Target", "DynamoDB_20120810.PutItem")
			if c.header != "" {
				req.Header.Set("Amz-Sdk-Request", c.header)
			}
			client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
			resp, err := client.Do(req)
			if err == nil {
				_ = resp.Body.Close()
			}
			if answered := err == nil && resp.StatusCode == http.StatusOK; answered != c.answered {
				t.Errorf("answered %v (err %v), want %v", answered, err, c.answered)
			}
			if lost := p.Totals().Lost; lost != map[bool]int{true: 0, false: 1}[c.answered] {
				t.Errorf("%d answers counted lost", lost)
			}
		})
	}
}
