//go:build integration

package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/team"
)

func TestDirectoryProjectsOwnersAgents(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	s := f.store

	web := team.Project{Slug: "website-v2", Name: "Website v2", OwnerApprovalTypes: []string{"code"}, StepDeadline: 2 * time.Hour,
		PulseStaleAfter: 10 * time.Minute, FileGuard: "warn"}
	for _, p := range []team.Project{web, {Slug: "billing", Name: "Billing"}} {
		if err := s.PutProject(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := s.Project(ctx, "website-v2"); err != nil || asJSON(t, got) != asJSON(t, web) {
		t.Errorf("project = %+v, %v; want %+v", got, err, web)
	}
	ana := team.Owner{Name: "ana", Email: "ana@example.com", SlackChannel: "C0123", SlackUserID: "U0ANA"}
	if err := s.PutOwner(ctx, ana); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Owner(ctx, "ana"); err != nil || got != ana {
		t.Errorf("owner = %+v, %v; want %+v", got, err, ana)
	}

	// Owner and projects must exist; a refused PutAgent writes nothing.
	if err := s.PutAgent(ctx, team.Agent{ID: "bo/codex", Projects: []string{"website-v2"}}); !errors.Is(err, team.ErrNotFound) {
		t.Errorf("agent of a missing owner: err = %v, want ErrNotFound", err)
	}
	if err := s.PutAgent(ctx, team.Agent{ID: "ana/claude", Projects: []string{"website-v2", "nope"}}); !errors.Is(err, team.ErrNotFound) {
		t.Errorf("agent in a missing project: err = %v, want ErrNotFound", err)
	}
	if _, err := s.Agent(ctx, "ana/claude"); !errors.Is(err, team.ErrNotFound) {
		t.Errorf("refused agent was stored: %v", err)
	}
	if err := s.PutAgent(ctx, team.Agent{ID: "ana/claude", Owner: "bo"}); err == nil {
		t.Error("agent whose owner differs from its id was accepted")
	}

	if err := s.PutAgent(ctx, team.Agent{ID: "ana/claude", Projects: []string{"website-v2", "billing", "website-v2"}}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Agent(ctx, "ana/claude")
	if err != nil || got.Owner != "ana" || asJSON(t, got.Projects) != `["billing","website-v2"]` {
		t.Errorf("agent = %+v, %v", got, err)
	}
	listed, err := s.ListAgents(ctx, "website-v2")
	if err != nil || len(listed) != 1 || listed[0].ID != "ana/claude" {
		t.Errorf("agents of website-v2 = %+v, %v", listed, err)
	}

	// Leaving a project removes the membership.
	if err := s.PutAgent(ctx, team.Agent{ID: "ana/claude", Projects: []string{"billing"}}); err != nil {
		t.Fatal(err)
	}
	if listed, err := s.ListAgents(ctx, "website-v2"); err != nil || len(listed) != 0 {
		t.Errorf("agents of website-v2 after leaving = %+v, %v", listed, err)
	}
	if listed, err := s.ListAgents(ctx, "billing"); err != nil || len(listed) != 1 {
		t.Errorf("agents of billing = %+v, %v", listed, err)
	}

	for _, missing := range []func() error{
		func() error { _, err := s.Project(ctx, "nope"); return err },
		func() error { _, err := s.Owner(ctx, "nope"); return err },
		func() error { _, err := s.Agent(ctx, "nope/nope"); return err },
	} {
		if err := missing(); !errors.Is(err, team.ErrNotFound) {
			t.Errorf("missing item: err = %v, want ErrNotFound", err)
		}
	}
}
