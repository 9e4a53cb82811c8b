package web

import (
	"strings"
	"testing"
)

// TestValidReturn: a sign-in comes back only to an approval page or an
// OAuth consent page or the device page of prickle-runner login, never to another path or another site.
func TestValidReturn(t *testing.T) {
	for _, c := range []struct {
		next string
		want bool
	}{
		{"a/eyJhIjoxfQ.c2ln", true},
		{"oauth/consent/1joWE7DPetTbW0_fI_bc44aFHmliaRywXoZMUoMAbWI", true},
		{"oauth/consent/", false},
		{"oauth/consent/" + strings.Repeat("a", 65), false},
		{"oauth/consent/x/../../evil", false},
		{"oauth/clients", false},
		{"//evil.example/oauth/consent/x", false},
		{"https://evil.example/a/x.y", false},
		{"p/website-v2", false},
		{"oauth/device", true},
		{"oauth/device?code=BCDF-GHJK", true},
		{"oauth/device?code=bcdf-ghjk", false},
		{"oauth/device?code=BCDF-GHJK&next=//evil.example", false},
		{"oauth/device?code=BCDF-GHJKL", false},
		{"oauth/device/../../evil", false},
	} {
		if got := validReturn(c.next); got != c.want {
			t.Errorf("validReturn(%q) = %v, want %v", c.next, got, c.want)
		}
	}
}
