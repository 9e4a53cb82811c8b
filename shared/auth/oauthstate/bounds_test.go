package oauthstate_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/auth/oauthstate"
)

// TestTheDocsStateTheRegistrationBounds: the numbers of the registration
// bounds in docs/security.md (the rule) and the README (its Status) are these
// constants', and so is how many networks fill a window.
func TestTheDocsStateTheRegistrationBounds(t *testing.T) {
	window := int(oauthstate.RegistrationWindow / time.Minute)
	networks := (oauthstate.RegistrationsOverall + oauthstate.RegistrationsPerNetwork - 1) / oauthstate.RegistrationsPerNetwork
	for path, wants := range map[string][]string{
		"docs/security.md": {
			fmt.Sprintf("accepts %d clients per network and %d overall per %d minutes, so %d networks fill a window",
				oauthstate.RegistrationsPerNetwork, oauthstate.RegistrationsOverall, window, networks),
			fmt.Sprintf("`Retry-After: %d`", int(oauthstate.RegistrationWindow/time.Second)),
		},
		"README.md": {
			fmt.Sprintf("and %d networks the %d dynamic OAuth registrations of a window", networks, oauthstate.RegistrationsOverall),
		},
	} {
		b, err := os.ReadFile("../../../" + path)
		if err != nil {
			t.Fatal(err)
		}
		doc := strings.Join(strings.Fields(string(b)), " ")
		for _, want := range wants {
			if !strings.Contains(doc, want) {
				t.Errorf("%s does not say %q", path, want)
			}
		}
	}
}
