package web_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/useprickle/prickle/shared/auth/oauthstate"
	"github.com/useprickle/prickle/shared/auth/session"
)

// revokeFails is a store whose OAuth grants cannot be revoked.
type revokeFails struct{ roomBackend }

func (revokeFails) RevokeOAuthConnection(context.Context, string) error {
	return errors.New("table unavailable")
}

// TestSignOutEverywhereSaysWhatItCouldNotEnd: when a connected client
// cannot be disconnected, the sessions are still ended and the page says
// that the applications may still be connected and what to do, not that
// everything ended.
func TestSignOutEverywhereSaysWhatItCouldNotEnd(t *testing.T) {
	e := newRoomEnv(t, revokeFails{newFakeRoom(t)})
	if err := e.store.PutOAuthConnection(context.Background(), oauthstate.Connection{ID: "grant_1", Owner: "alice", Agent: "alice/writer", ClientName: "Claude", CreatedAt: e.clock.now()}); err != nil {
		t.Fatal(err)
	}
	alice := e.signIn("alice")
	kept := e.browser()
	kept.cookies[session.CookieName] = alice.cookies[session.CookieName]
	r := alice.do(http.MethodPost, "/signout-everywhere", url.Values{"csrf": {formToken(t, alice.get("/"))}})
	if r.status != http.StatusInternalServerError || !strings.Contains(r.text, "some connected applications may still be connected") || strings.Contains(r.text, "Signed out everywhere") {
		t.Errorf("sign out everywhere with a failing revocation = %d:\n%s", r.status, r.text)
	}
	assertSignedOut(t, kept, "a copy of the cookie after a partly failed sign out everywhere")
}
