package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/admin"
)

// The seeded directory: website-v2 with two owners and three agents, and
// mobile-app with an agent outside website-v2.
var (
	seedProjects = []team.Project{
		// Docs go public, so their accepted results also need the owner's approval.
		{Slug: "website-v2", Name: "Website v2", StepDeadline: step.DefaultPendingDeadline, OwnerApprovalTypes: []string{"doc"}},
		{Slug: "mobile-app", Name: "Mobile app", StepDeadline: step.DefaultPendingDeadline},
	}
	seedOwners = []team.Owner{
		{Name: "alice", Email: "alice@example.com", SlackChannel: "#alice-agents", SlackUserID: "U0ALICE"},
		{Name: "bob", Email: "bob@example.com", SlackChannel: "#website", SlackUserID: "U0BOB"},
		{Name: "carol", Email: "carol@example.com"},
	}
	seedAgents = map[string][]string{
		"alice/writer":  {"website-v2"},
		"alice/builder": {"website-v2"},
		"bob/reviewer":  {"website-v2"},
		"carol/tester":  {"mobile-app"},
		"carol/lead":    {"mobile-app"},
	}
)

// seedTokenless are seeded agents that get no token: carol/lead only hands
// off mobile-app's seeded task, since no agent hands a task to itself.
var seedTokenless = []string{"carol/lead"}

// seedAgentOrder keeps token minting and printing stable.
var seedAgentOrder = []string{"alice/writer", "alice/builder", "bob/reviewer", "carol/tester"}

// seed fills an empty store with the demo projects, agents and tasks. The
// tasks are made through the team service itself, so their histories are real.
func seed(ctx context.Context, adm *admin.Admin, st admin.Store) error {
	for _, p := range seedProjects {
		if err := adm.CreateProject(ctx, p); err != nil {
			return err
		}
	}
	for _, o := range seedOwners {
		if err := adm.CreateOwner(ctx, o); err != nil {
			return err
		}
	}
	for _, id := range append(slices.Clone(seedAgentOrder), seedTokenless...) {
		if err := adm.CreateAgent(ctx, id, seedAgents[id]); err != nil {
			return err
		}
	}
	ids := []string{"example-task-id", "review-pricing-pr", "build-hero", "about-fact-check", "logo-export", "mobile-smoke-test"}
	svc := team.New(st)
	svc.NewID = func(prefix string) string {
		if prefix == "tsk_" && len(ids) > 0 {
			id := ids[0]
			ids = ids[1:]
			return id
		}
		return team.RandomID(prefix)
	}
	as := func(agent string) identity.Caller {
		owner, _, _ := strings.Cut(agent, "/")
		return identity.Caller{Agent: agent, Owner: owner, Kind: identity.KindAgent}
	}
	writer, builder, reviewer, lead := as("alice/writer"), as("alice/builder"), as("bob/reviewer"), as("carol/lead")
	steps := []func() error{
		func() error {
			_, err := svc.HandOffTask(ctx, reviewer, team.HandOffInput{Project: "website-v2", Assignee: "alice/writer", Packet: task.Packet{
				Task: "Draft the hero headline and CTA for the new landing page.", DeliverableType: "answer",
				AcceptanceCriteria: []string{"Headline of at most 8 words.", "CTA invites visitors to try the demo."},
				Context:            "Audience: engineering leads running several coding agents.", Files: []string{"site/hero.md"},
			}})
			return err
		},
		func() error {
			_, err := svc.AcceptTask(ctx, writer, team.AcceptInput{TaskID: "example-task-id", Note: "On it."})
			return err
		},
		func() error {
			_, err := svc.SaveCheckpoint(ctx, writer, team.CheckpointInput{TaskID: "example-task-id", Progress: "Drafted two headline options.",
				Decisions: []string{"Lead with coordination, not speed."}, FilesTouched: []string{"site/hero.md"}, NextSteps: []string{"Pick one headline and write the CTA."}})
			return err
		},
		func() error {
			_, err := svc.HandOffTask(ctx, builder, team.HandOffInput{Project: "website-v2", Assignee: "bob/reviewer", Packet: task.Packet{
				Task: "Review PR #42: the new pricing table.", DeliverableType: "reviewed_pr",
				AcceptanceCriteria: []string{"Every plan shows its monthly price.", "No layout shift on mobile."},
			}})
			return err
		},
		func() error {
			_, err := svc.HandOffTask(ctx, reviewer, team.HandOffInput{Project: "website-v2", Assignee: "alice/builder", Packet: task.Packet{
				Task: "Build the hero section from the approved copy.", DeliverableType: "code",
				AcceptanceCriteria: []string{"Uses the headline and CTA from example-task-id.", "Lighthouse accessibility score stays at 100."},
				DependsOn:          []string{"example-task-id"},
			}})
			return err
		},
		func() error {
			_, err := svc.HandOffTask(ctx, writer, team.HandOffInput{Project: "website-v2", Assignee: "bob/reviewer", Packet: task.Packet{
				Task: "Fact-check the About page.", DeliverableType: "answer", AcceptanceCriteria: []string{"Every claim has a source or is flagged."},
			}})
			if err != nil {
				return err
			}
			if _, err := svc.AcceptTask(ctx, reviewer, team.AcceptInput{TaskID: "about-fact-check"}); err != nil {
				return err
			}
			_, err = svc.ReturnResult(ctx, reviewer, team.ReturnResultInput{TaskID: "about-fact-check", Summary: "Two claims lacked sources; both are flagged inline.",
				Evidence: []task.Evidence{{Kind: "note", Summary: "Flagged: founding year and customer count."}}})
			return err
		},
		func() error {
			_, err := svc.HandOffTask(ctx, reviewer, team.HandOffInput{Project: "website-v2", Assignee: "alice/builder", Packet: task.Packet{
				Task: "Export the new logo set.", DeliverableType: "design", AcceptanceCriteria: []string{"SVG and PNG at 1x and 2x."},
			}})
			if err != nil {
				return err
			}
			if _, err := svc.AcceptTask(ctx, builder, team.AcceptInput{TaskID: "logo-export"}); err != nil {
				return err
			}
			if _, err := svc.ReturnResult(ctx, builder, team.ReturnResultInput{TaskID: "logo-export", Summary: "Exported all sizes.",
				Evidence: []task.Evidence{{Kind: "link", Summary: "Logo folder", URL: "https://example.com/brand/logos"}}}); err != nil {
				return err
			}
			_, err = svc.ReviewResult(ctx, reviewer, team.ReviewInput{TaskID: "logo-export", Verdict: "accept"})
			return err
		},
		func() error {
			_, err := svc.HandOffTask(ctx, lead, team.HandOffInput{Project: "mobile-app", Assignee: "carol/tester", Packet: task.Packet{
				Task: "Smoke-test the login screen.", DeliverableType: "screenshots", AcceptanceCriteria: []string{"Screenshots of each error state."},
			}})
			return err
		},
		func() error {
			branch, decision := "hero-copy", "Lead with coordination, not speed."
			_, err := svc.UpdatePulse(ctx, writer, team.UpdatePulseInput{Project: "website-v2", Availability: "working", Doing: "Drafting the hero copy.",
				TaskID: "example-task-id", Branch: &branch, Files: []string{"site/hero.md"}, LastDecision: &decision})
			return err
		},
		func() error {
			_, err := svc.UpdatePulse(ctx, reviewer, team.UpdatePulseInput{Project: "website-v2", Availability: "idle", Doing: "Waiting for results to review."})
			return err
		},
	}
	for i, s := range steps {
		if err := s(); err != nil {
			return fmt.Errorf("seed step %d: %w", i+1, err)
		}
	}
	return nil
}

// seededAlready reports whether the store holds the seed from an earlier run.
func seededAlready(ctx context.Context, st admin.Store) bool {
	_, err := st.Project(ctx, "website-v2")
	return err == nil
}

// demoTokens reuses the tokens of the last run while they still work and
// mints fresh ones otherwise; secrets live only in local.json and memory.
func demoTokens(ctx context.Context, adm *admin.Admin, st identity.TokenLookup, previous map[string]string) (map[string]string, error) {
	tokens := map[string]string{}
	for _, agent := range seedAgentOrder {
		if secret, ok := previous[agent]; ok {
			if c, err := identity.Authenticate(ctx, st, secret, time.Now()); err == nil && c.Agent == agent {
				tokens[agent] = secret
				continue
			}
		}
		secret, err := adm.MintAgentToken(ctx, agent)
		if err != nil {
			return nil, err
		}
		tokens[agent] = secret
	}
	return tokens, nil
}
