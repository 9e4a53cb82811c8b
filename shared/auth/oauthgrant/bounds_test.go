package oauthgrant_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/auth/oauthgrant"
)

// TestTheREADMEStatesTheRegistrationBounds: the README's numbers of the
// registration bounds are these constants', and so is how many networks
// fill a window.
func TestTheREADMEStatesTheRegistrationBounds(t *testing.T) {
	b, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Join(strings.Fields(string(b)), " ")
	window := int(oauthgrant.RegistrationWindow / time.Minute)
	networks := (oauthgrant.RegistrationsOverall + oauthgrant.RegistrationsPerNetwork - 1) / oauthgrant.RegistrationsPerNetwork
	for _, want := range []string{
		fmt.Sprintf("%d registrations per network and %d overall per %d minutes", oauthgrant.RegistrationsPerNetwork, oauthgrant.RegistrationsOverall, window),
		fmt.Sprintf("accepts %d clients per network and %d overall per %d minutes, so %d networks fill a window",
			oauthgrant.RegistrationsPerNetwork, oauthgrant.RegistrationsOverall, window, networks),
		fmt.Sprintf("`Retry-After: %d`", int(oauthgrant.RegistrationWindow/time.Second)),
		fmt.Sprintf("and %d networks the %d dynamic OAuth registrations of a window", networks, oauthgrant.RegistrationsOverall),
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("the README does not say %q", want)
		}
	}
}
