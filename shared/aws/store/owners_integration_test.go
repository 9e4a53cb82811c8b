//go:build integration

package store_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/useprickle/prickle/shared/team"
)

func TestOwnerProjectsAreTheProjectsOfItsAgents(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	s := f.store
	for _, p := range []string{"website-v2", "billing", "mobile-app"} {
		if err := s.PutProject(ctx, team.Project{Slug: p, Name: p}); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range []string{"ana", "bo", "cy"} {
		if err := s.PutOwner(ctx, team.Owner{Name: o}); err != nil {
			t.Fatal(err)
		}
	}
	for _, a := range []team.Agent{
		{ID: "ana/writer", Projects: []string{"website-v2"}},
		{ID: "ana/builder", Projects: []string{"billing", "website-v2"}},
		{ID: "bo/reviewer", Projects: []string{"website-v2"}},
		{ID: "cy/tester", Projects: []string{"mobile-app"}},
	} {
		if err := s.PutAgent(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	for owner, want := range map[string][]string{
		"ana": {"billing", "website-v2"}, "bo": {"website-v2"}, "cy": {"mobile-app"}, "nobody": {},
	} {
		got, err := s.OwnerProjects(ctx, owner)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("OwnerProjects(%s) = %v; want %v", owner, got, want)
		}
	}
	// Leaving a project takes it off the owner's list.
	if err := s.PutAgent(ctx, team.Agent{ID: "ana/builder", Projects: []string{"website-v2"}}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.OwnerProjects(ctx, "ana"); !reflect.DeepEqual(got, []string{"website-v2"}) {
		t.Errorf("after leaving billing: %v", got)
	}
}
