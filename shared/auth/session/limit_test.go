package session_test

import (
	"fmt"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/auth/session"
)

func TestClient(t *testing.T) {
	for _, tc := range []struct {
		remote, forwarded, want string
	}{
		{"203.0.113.7:51234", "", "203.0.113.7"},
		{"203.0.113.7", "", "203.0.113.7"}, // API Gateway's sourceIp, as the Lambda adapter sets it
		{"203.0.113.7", "198.51.100.1", "203.0.113.7"},
		{"[2001:db8:1:2:3:4:5:6]:443", "", "2001:db8:1:2::/64"},
		{"2001:db8:1:2:ffff::1", "", "2001:db8:1:2::/64"},
		{"::ffff:203.0.113.7", "", "203.0.113.7"},
		{"", "", "unknown"},
		{"not an address", "203.0.113.9", "unknown"},
	} {
		r := httptest.NewRequest("POST", "/signin", nil)
		r.RemoteAddr = tc.remote
		if tc.forwarded != "" {
			r.Header.Set("X-Forwarded-For", tc.forwarded)
		}
		if got := session.Client(r); got != tc.want {
			t.Errorf("Client(%q, X-Forwarded-For %q) = %q, want %q", tc.remote, tc.forwarded, got, tc.want)
		}
	}
}

// readme is the repository's README with every run of white space made one
// space, so a sentence matches however it is wrapped.
func readme(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(strings.Fields(string(b)), " ")
}

// TestTheREADMEStatesTheSignInBounds: the README's numbers of the sign-in
// bounds are these constants', and so is how many addresses use up a name.
func TestTheREADMEStatesTheSignInBounds(t *testing.T) {
	doc := readme(t)
	window := int(session.SignInWindow / time.Minute)
	strangers := (session.LinksPerName + session.LinksPerNamePerClient - 1) / session.LinksPerNamePerClient
	var starts []string
	for m := 0; m < 60; m += window {
		starts = append(starts, fmt.Sprintf(":%02d", m))
	}
	for _, want := range []string{
		fmt.Sprintf("`POST /signin` is counted three ways per %d minutes", window),
		fmt.Sprintf("per client (%d requests, any names), per name per client (%d), and per name from every client together (%d:",
			session.RequestsPerClient, session.LinksPerNamePerClient, session.LinksPerName),
		fmt.Sprintf("use up a name's %d links of a window (that bound is what keeps an inbox from being flooded), and it takes only %d addresses (%d links each)",
			session.LinksPerName, strangers, session.LinksPerNamePerClient),
		fmt.Sprintf("windows are fixed: they start at %s and %s UTC", strings.Join(starts[:len(starts)-1], ", "), starts[len(starts)-1]),
		fmt.Sprintf("a link already sent works for its %d minutes", int(session.LinkLifetime/time.Minute)),
		fmt.Sprintf("per %d minutes at most %d per name from one client, %d from one client, %d per name in all",
			window, session.LinksPerNamePerClient, session.RequestsPerClient, session.LinksPerName),
		fmt.Sprintf("strangers on %d addresses can use up a name's %d sign-in links of a window", strangers, session.LinksPerName),
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("the README does not say %q", want)
		}
	}
}
