package sameorigin

import (
	"net/http/httptest"
	"testing"
)

func TestPost(t *testing.T) {
	const own = "https://prickle.example.com"
	for _, tc := range []struct {
		name, site, origin, own string
		want                    bool
	}{
		{"no headers (curl)", "", "", own, true},
		{"the page's own form", "same-origin", own, own, true},
		{"Origin in another case", "", "HTTPS://Prickle.Example.com", own, true},
		{"Origin null under no-referrer", "same-origin", "null", own, true},
		{"cross-site", "cross-site", "", own, false},
		{"same-site (a sibling subdomain)", "same-site", own, own, false},
		{"another origin", "", "https://evil.example", own, false},
		{"another port", "", own + ":8443", own, false},
		{"a broken base URL matches no Origin", "", own, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/x", nil)
			if tc.site != "" {
				r.Header.Set("Sec-Fetch-Site", tc.site)
			}
			if tc.origin != "" {
				r.Header.Set("Origin", tc.origin)
			}
			if got := Post(r, tc.own); got != tc.want {
				t.Fatalf("Post = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestOf(t *testing.T) {
	for _, tc := range []struct{ base, want string }{
		{"https://prickle.example.com/stage/", "https://prickle.example.com"},
		{"http://127.0.0.1:3000", "http://127.0.0.1:3000"},
		{"not a url", ""},
		{"://", ""},
	} {
		if got := Of(tc.base); got != tc.want {
			t.Errorf("Of(%q) = %q, want %q", tc.base, got, tc.want)
		}
	}
}
