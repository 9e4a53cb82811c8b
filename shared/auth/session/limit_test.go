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

// flatDoc is a page of the repository's documentation (a path from the
// repository root) with every run of white space made one space, so a
// sentence matches however it is wrapped.
func flatDoc(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile("../../../" + path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(strings.Fields(string(b)), " ")
}

// TestTheDocsStateTheSignInBounds: the numbers of the sign-in bounds in
// docs/security.md (the rule) and the README (its Status) are these
// constants', and so is how many addresses use up a name.
func TestTheDocsStateTheSignInBounds(t *testing.T) {
	window := int(session.SignInWindow / time.Minute)
	strangers := (session.LinksPerName + session.LinksPerNamePerClient - 1) / session.LinksPerNamePerClient
	var starts []string
	for m := 0; m < 60; m += window {
		starts = append(starts, fmt.Sprintf(":%02d", m))
	}
	for path, wants := range map[string][]string{
		"docs/security.md": {
			fmt.Sprintf("`POST /signin` is counted three ways per %d minutes", window),
			fmt.Sprintf("per client (%d requests, any names), per name per client (%d), and per name from every client together (%d:",
				session.RequestsPerClient, session.LinksPerNamePerClient, session.LinksPerName),
			fmt.Sprintf("use up a name's %d links of a window (that bound is what keeps an inbox from being flooded), and it takes only %d addresses (%d links each)",
				session.LinksPerName, strangers, session.LinksPerNamePerClient),
			fmt.Sprintf("windows are fixed: they start at %s and %s UTC", strings.Join(starts[:len(starts)-1], ", "), starts[len(starts)-1]),
			fmt.Sprintf("a link already sent works for its %d minutes", int(session.LinkLifetime/time.Minute)),
			fmt.Sprintf("A sign-in link signs in as its owner for %d hours", int(session.SessionLifetime/time.Hour)),
		},
		"docs/owners.md": {
			fmt.Sprintf("A link is single use and valid for %d minutes; it sets a signed, HttpOnly, SameSite=Lax session cookie for %d h",
				int(session.LinkLifetime/time.Minute), int(session.SessionLifetime/time.Hour)),
		},
		"README.md": {
			fmt.Sprintf("strangers on %d addresses can use up a name's %d sign-in links of a window", strangers, session.LinksPerName),
		},
	} {
		doc := flatDoc(t, path)
		for _, want := range wants {
			if !strings.Contains(doc, want) {
				t.Errorf("%s does not say %q", path, want)
			}
		}
	}
}
