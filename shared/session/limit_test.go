package session_test

import (
	"net/http/httptest"
	"testing"

	"github.com/useprickle/prickle/shared/session"
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
