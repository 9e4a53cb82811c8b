package oauth

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestSignInPageSaysPendingLifespan: how long a connection request waits is
// said from PendingLifespan, the rule that keeps it.
func TestSignInPageSaysPendingLifespan(t *testing.T) {
	var b bytes.Buffer
	if err := pages.ExecuteTemplate(&b, "signin.html", pageView{Title: "Sign in", Bare: true, ID: "req", Next: "oauth/consent/req"}); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("This request waits %d minutes.", int(PendingLifespan/time.Minute))
	if !strings.Contains(b.String(), want) {
		t.Errorf("the sign-in page lacks %q:\n%s", want, b.String())
	}
}
