//go:build integration

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/auth/session"
	"github.com/useprickle/prickle/shared/aws/store/storetest"
)

// TestReopen: reopen-signin gives an owner the sign-in links strangers used
// up, and reopen-registrations the dynamic registrations of the window,
// printing what they cleared; against the tables the environment names.
func TestReopen(t *testing.T) {
	ctx := context.Background()
	fx := storetest.New(t)
	deployedTables(t, fx)
	// The commands count in the current window: start well inside one.
	if left := time.Until(time.Now().Truncate(session.SignInWindow).Add(session.SignInWindow)); left < 20*time.Second {
		time.Sleep(left + time.Second)
	}
	now := time.Now()
	for i := range session.LinksPerName {
		if _, err := fx.Store.AllowSignInRequest(ctx, "alice", fmt.Sprintf("198.51.100.%d", i/session.LinksPerNamePerClient), now); err != nil {
			t.Fatal(err)
		}
	}
	if limit, err := fx.Store.AllowSignInRequest(ctx, "alice", "203.0.113.7", now); err != nil || limit != session.NameLimit {
		t.Fatalf("alice's request before reopening: %q, %v", limit, err)
	}
	out, err := run(ctx, "reopen-signin", []string{"--owner", "alice"})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Owner  string    `json:"owner"`
		Links  int       `json:"links_counted"`
		Window time.Time `json:"window_ends"`
	}
	b, _ := json.Marshal(out)
	if err := json.Unmarshal(b, &got); err != nil || got.Owner != "alice" || got.Links != session.LinksPerName || !got.Window.After(now) || got.Window.After(now.Add(session.SignInWindow)) {
		t.Errorf("reopen-signin printed %s", b)
	}
	if limit, err := fx.Store.AllowSignInRequest(ctx, "alice", "203.0.113.7", time.Now()); err != nil || limit != session.WithinLimits {
		t.Errorf("alice's request after reopening: %q, %v", limit, err)
	}
	if _, err := run(ctx, "reopen-signin", nil); err == nil {
		t.Error("reopen-signin without --owner succeeded")
	}

	if ok, err := fx.Store.AllowOAuthRegistration(ctx, "net-1", time.Now()); err != nil || !ok {
		t.Fatalf("a registration: %v, %v", ok, err)
	}
	out, err = run(ctx, "reopen-registrations", nil)
	if b, _ := json.Marshal(out); err != nil || !strings.Contains(string(b), `"registrations_counted":1`) {
		t.Errorf("reopen-registrations printed %s, %v", b, err)
	}
}
