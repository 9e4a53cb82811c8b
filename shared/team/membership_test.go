package team_test

import (
	"context"
	"strings"
	"testing"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/teamtest"
)

// directoryReads counts the directory reads the service makes over the fake.
type directoryReads struct {
	*teamtest.Store
	agents, projects int
}

func (d *directoryReads) Agent(ctx context.Context, id string) (team.Agent, error) {
	d.agents++
	return d.Store.Agent(ctx, id)
}

func (d *directoryReads) Project(ctx context.Context, slug string) (team.Project, error) {
	d.projects++
	return d.Store.Project(ctx, slug)
}

// withProjects is the caller as a token carrying its memberships says.
func withProjects(c identity.Caller, projects ...string) identity.Caller {
	c.Projects, c.ProjectsKnown = projects, true
	return c
}

func TestMembershipsFromTheTokenSpareDirectoryReads(t *testing.T) {
	f := newFixture(t)
	reads := &directoryReads{Store: f.store}
	f.svc.Store = reads
	a, b := withProjects(alice, "website-v2"), withProjects(bob, "website-v2", "mobile")
	tk := f.handOff(a, "website-v2", bob.Agent, "code") // reads the assignee only

	calls := []struct {
		name     string
		call     func() error
		projects int // the tools that need a project's settings read it
	}{
		{"get_task", func() error { _, err := f.svc.GetTask(ctx, a, team.GetTaskInput{TaskID: tk.ID}); return err }, 0},
		{"read_room", func() error { _, err := f.svc.ReadRoom(ctx, b, team.ReadRoomInput{Project: "website-v2"}); return err }, 0},
		{"update_pulse", func() error {
			_, err := f.svc.UpdatePulse(ctx, b, team.UpdatePulseInput{Project: "website-v2", Doing: "x", TaskID: tk.ID})
			return err
		}, 0},
		{"accept_task", func() error { _, err := f.svc.AcceptTask(ctx, b, team.AcceptInput{TaskID: tk.ID}); return err }, 0},
		{"save_checkpoint", func() error {
			_, err := f.svc.SaveCheckpoint(ctx, b, team.CheckpointInput{TaskID: tk.ID, Progress: "started"})
			return err
		}, 0},
	}
	reads.agents = 0
	for _, c := range calls {
		reads.projects = 0
		if err := c.call(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if reads.projects != c.projects {
			t.Errorf("%s read %d projects, want %d", c.name, reads.projects, c.projects)
		}
	}
	if reads.agents != 0 {
		t.Errorf("the tools read the caller's agent %d times; the token carries its memberships", reads.agents)
	}
}

func TestMembershipsFromTheTokenDecide(t *testing.T) {
	f := newFixture(t)
	tk := f.handOff(alice, "website-v2", bob.Agent, "code")
	// The directory still lists bob in website-v2, but his token (kept in
	// step by the store) no longer does: the token decides, with the same
	// refusals as for an outsider.
	b := withProjects(bob, "mobile")
	_, err := f.svc.GetTask(ctx, b, team.GetTaskInput{TaskID: tk.ID})
	if err == nil || !strings.Contains(err.Error(), "no task "+tk.ID+" in a project of bob/reviewer") {
		t.Errorf("get_task = %v, want the outsider's refusal", err)
	}
	_, err = f.svc.ReadRoom(ctx, b, team.ReadRoomInput{Project: "website-v2"})
	if err == nil || !strings.Contains(err.Error(), "no project website-v2 that bob/reviewer belongs to") {
		t.Errorf("read_room = %v, want the outsider's refusal", err)
	}
}

func TestTokensWithoutMembershipsReadTheAgent(t *testing.T) {
	f := newFixture(t)
	reads := &directoryReads{Store: f.store}
	f.svc.Store = reads
	if _, err := f.svc.ReadRoom(ctx, bob, team.ReadRoomInput{Project: "website-v2"}); err != nil {
		t.Fatalf("read_room with a token stored before memberships: %v", err)
	}
	if reads.agents != 1 {
		t.Errorf("read the agent %d times, want 1 (the fallback)", reads.agents)
	}
	if _, err := f.svc.ReadRoom(ctx, carol, team.ReadRoomInput{Project: "website-v2"}); err == nil {
		t.Error("carol read a room she is not in")
	}
}
