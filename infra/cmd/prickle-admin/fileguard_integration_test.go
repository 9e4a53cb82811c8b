//go:build integration

package main

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/aws/store/storetest"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/admin"
)

// TestSetFileGuard: set-file-guard sets a project's file guard and keeps
// its other settings; an unknown guard or project is refused and changes
// nothing.
func TestSetFileGuard(t *testing.T) {
	ctx := context.Background()
	fx := storetest.New(t)
	web := team.Project{Slug: "website-v2", Name: "Website v2", OwnerApprovalTypes: []string{"doc"}, StepDeadline: time.Hour, PulseStaleAfter: 10 * time.Minute}
	if err := admin.New(fx.Store).CreateProject(ctx, web); err != nil {
		t.Fatal(err)
	}
	deployedTables(t, fx)
	stored := func() team.Project {
		t.Helper()
		p, err := fx.Store.Project(ctx, "website-v2")
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	if got := stored(); got.Guard() != "deny" {
		t.Errorf("a new project's guard = %q, want deny", got.Guard())
	}
	for _, bad := range []string{"off", "WARN", "deny;warn"} {
		if _, err := run(ctx, "set-file-guard", []string{"--project", "website-v2", "--guard", bad}); err == nil || !strings.Contains(err.Error(), "must be one of") {
			t.Errorf("set-file-guard %q: %v, want refused", bad, err)
		}
	}
	if _, err := run(ctx, "set-file-guard", []string{"--project", "nope", "--guard", "warn"}); err == nil {
		t.Error("set-file-guard on an unknown project succeeded")
	}
	if got := stored(); !reflect.DeepEqual(got, web) {
		t.Fatalf("after refusals the project is %+v, want %+v", got, web)
	}
	for _, g := range []string{"warn", "ask", "deny"} {
		if _, err := run(ctx, "set-file-guard", []string{"--project", "website-v2", "--guard", g}); err != nil {
			t.Fatal(err)
		}
		want := web
		want.FileGuard = g
		if got := stored(); !reflect.DeepEqual(got, want) {
			t.Errorf("after set-file-guard %s the project is %+v, want %+v", g, got, want)
		}
	}
}
