package team_test

import (
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/team"
)

// room seeds website-v2 with tasks between alice, bob and dave, some
// created at the same instant, and returns the ids that involve bob by role.
func room(f *fixture) (asAssignee, asRequester, notBob []string) {
	f.t.Helper()
	for i := range 24 {
		if i%3 != 0 { // every third task shares its creation instant with the one before
			f.advance(time.Minute)
		}
		switch i % 4 {
		case 0, 1:
			asAssignee = append(asAssignee, f.handOff(alice, "website-v2", bob.Agent, "answer").ID)
		case 2:
			asRequester = append(asRequester, f.handOff(bob, "website-v2", dave.Agent, "answer").ID)
		case 3:
			notBob = append(notBob, f.handOff(alice, "website-v2", dave.Agent, "answer").ID)
		}
	}
	return asAssignee, asRequester, notBob
}

// readAll pages through read_room and checks each page on the way.
func readAll(t *testing.T, f *fixture, c identity.Caller, in team.ReadRoomInput) []task.Task {
	t.Helper()
	cursorShape := regexp.MustCompile(`^[A-Za-z0-9_-]{1,512}$`) // read_room's cursor argument
	var all []task.Task
	for page := 0; ; page++ {
		if page > 50 {
			t.Fatal("read_room never ends")
		}
		out, err := f.svc.ReadRoom(ctx, c, in)
		if err != nil {
			t.Fatalf("read_room page %d: %v", page, err)
		}
		all = append(all, out.Tasks...)
		if out.NextCursor == nil {
			return all
		}
		if len(out.Tasks) != in.Limit {
			t.Errorf("page %d has %d tasks and a next cursor; want a full page of %d", page, len(out.Tasks), in.Limit)
		}
		if !cursorShape.MatchString(*out.NextCursor) {
			t.Fatalf("next_cursor %q would break read_room's cursor pattern", *out.NextCursor)
		}
		in.Cursor = *out.NextCursor
	}
}

func ids(ts []task.Task) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.ID
	}
	return out
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func TestReadRoomPagesNewestFirstWithoutSkipsOrRepeats(t *testing.T) {
	f := newFixture(t)
	asAssignee, asRequester, _ := room(f)
	want := append(slices.Clone(asAssignee), asRequester...)
	for _, limit := range []int{1, 4, 5, 17, 100} {
		t.Run("limit "+itoa(limit), func(t *testing.T) {
			got := readAll(t, f, bob, team.ReadRoomInput{Project: "website-v2", Limit: limit})
			if !sameSet(ids(got), want) || len(got) != len(want) {
				t.Fatalf("paged read returned %v, want each of %v once", ids(got), want)
			}
			for i := 1; i < len(got); i++ {
				if got[i].CreatedAt.After(got[i-1].CreatedAt) {
					t.Errorf("%s (created %v) comes after the older %s", got[i].ID, got[i].CreatedAt, got[i-1].ID)
				}
			}
		})
	}
}

func TestReadRoomCursorSurvivesWritesBetweenPages(t *testing.T) {
	f := newFixture(t)
	asAssignee, asRequester, _ := room(f)
	want := append(slices.Clone(asAssignee), asRequester...)
	in := team.ReadRoomInput{Project: "website-v2", Limit: 5}
	first, err := f.svc.ReadRoom(ctx, bob, in)
	if err != nil || first.NextCursor == nil {
		t.Fatalf("first page: %v, cursor %v", err, first.NextCursor)
	}
	// Between pages: a newer task appears and a listed one moves on.
	f.advance(time.Minute)
	newer := f.handOff(alice, "website-v2", bob.Agent, "answer")
	i := slices.IndexFunc(first.Tasks, func(t task.Task) bool { return t.Assignee == bob.Agent })
	f.must(f.svc.AcceptTask(ctx, bob, team.AcceptInput{TaskID: first.Tasks[i].ID}))
	in.Cursor = *first.NextCursor
	rest := readAll(t, f, bob, in)
	got := append(ids(first.Tasks), ids(rest)...)
	if !sameSet(got, want) || len(got) != len(want) {
		t.Errorf("pages read %v, want each of the %d tasks present at the first page exactly once", got, len(want))
	}
	if slices.Contains(got, newer.ID) {
		t.Errorf("task %s, newer than the first page, showed up on a later page", newer.ID)
	}
}

func TestReadRoomFilters(t *testing.T) {
	f := newFixture(t)
	asAssignee, asRequester, notBob := room(f)
	accepted := asAssignee[:3]
	for _, id := range accepted {
		f.must(f.svc.AcceptTask(ctx, bob, team.AcceptInput{TaskID: id}))
	}
	cases := []struct {
		name   string
		caller identity.Caller
		in     team.ReadRoomInput
		want   []string
	}{
		{"role any (default)", bob, team.ReadRoomInput{}, append(slices.Clone(asAssignee), asRequester...)},
		{"role any", bob, team.ReadRoomInput{Role: "any"}, append(slices.Clone(asAssignee), asRequester...)},
		{"role assignee", bob, team.ReadRoomInput{Role: "assignee"}, asAssignee},
		{"role requester", bob, team.ReadRoomInput{Role: "requester"}, asRequester},
		{"states filter", bob, team.ReadRoomInput{States: []task.State{task.Accepted}}, accepted},
		{"states filter with role", bob, team.ReadRoomInput{Role: "requester", States: []task.State{task.Accepted}}, nil},
		{"several states", bob, team.ReadRoomInput{Role: "assignee", States: []task.State{task.Routed, task.Accepted}}, asAssignee},
		{"another member sees their own tasks", dave, team.ReadRoomInput{Role: "assignee"}, append(slices.Clone(asRequester), notBob...)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := c.in
			in.Project, in.Limit = "website-v2", 7
			got := ids(readAll(t, f, c.caller, in))
			if !sameSet(got, c.want) || len(got) != len(c.want) {
				t.Errorf("read %v, want %v", got, c.want)
			}
		})
	}
}

func TestReadRoomDefaultLimitAndBadCursors(t *testing.T) {
	f := newFixture(t)
	room(f)
	out, err := f.svc.ReadRoom(ctx, bob, team.ReadRoomInput{Project: "website-v2"})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Tasks) != 18 || out.NextCursor != nil {
		t.Errorf("default page = %d tasks, cursor %v; want all 18 of bob's tasks (default limit 20) and no cursor", len(out.Tasks), out.NextCursor)
	}
	out, err = f.svc.ReadRoom(ctx, bob, team.ReadRoomInput{Project: "website-v2", Role: "assignee", Limit: 2})
	if err != nil || out.NextCursor == nil {
		t.Fatalf("read_room: %v, cursor %v", err, out.NextCursor)
	}
	assigneeCursor := *out.NextCursor
	cases := []struct {
		name   string
		caller identity.Caller
		in     team.ReadRoomInput
	}{
		{"made up", bob, team.ReadRoomInput{Role: "assignee", Cursor: "bm90LWEtY3Vyc29y"}},
		{"not base64", bob, team.ReadRoomInput{Role: "assignee", Cursor: "!!!"}},
		{"from another role", bob, team.ReadRoomInput{Role: "requester", Cursor: assigneeCursor}},
		{"from another states filter", bob, team.ReadRoomInput{Role: "assignee", States: []task.State{task.Routed}, Cursor: assigneeCursor}},
		{"from another caller", dave, team.ReadRoomInput{Role: "assignee", Cursor: assigneeCursor}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := c.in
			in.Project, in.Limit = "website-v2", 2
			_, err := f.svc.ReadRoom(ctx, c.caller, in)
			wantRefusal(t, err, "cursor "+quote(in.Cursor)+" is not one read_room returned for this query; start again without a cursor")
		})
	}
}

func TestUpdatePulseShowsInTheRoom(t *testing.T) {
	f := newFixture(t)
	tk := f.handOff(alice, "website-v2", bob.Agent, "code")
	branch, decision := "fix-footer", "patch, not rewrite"
	out, err := f.svc.UpdatePulse(ctx, bob, team.UpdatePulseInput{Project: "website-v2", Doing: "Fixing the footer", TaskID: tk.ID, Branch: &branch, Files: []string{"footer.tsx"}, LastDecision: &decision})
	if err != nil {
		t.Fatal(err)
	}
	e := out.Pulse
	if e.AgentID != bob.Agent || e.Owner != "bob" || e.Availability != "working" || e.TaskID == nil || *e.TaskID != tk.ID || !e.UpdatedAt.Equal(f.now) {
		t.Errorf("pulse = %+v, want bob's, availability defaulted to working, on %s at %v", e, tk.ID, f.now)
	}
	f.advance(time.Minute)
	if _, err := f.svc.UpdatePulse(ctx, dave, team.UpdatePulseInput{Project: "website-v2", Availability: "idle", Doing: "Waiting for work"}); err != nil {
		t.Fatal(err)
	}
	room, err := f.svc.ReadRoom(ctx, alice, team.ReadRoomInput{Project: "website-v2"})
	if err != nil {
		t.Fatal(err)
	}
	if len(room.Pulse) != 2 || room.Pulse[0].AgentID != dave.Agent || room.Pulse[1].AgentID != bob.Agent {
		t.Fatalf("room pulse = %+v, want dave's (newest) then bob's", room.Pulse)
	}
	if b := room.Pulse[1]; b.Doing != "Fixing the footer" || b.Branch == nil || *b.Branch != branch || !slices.Equal(b.Files, []string{"footer.tsx"}) || b.LastDecision == nil || *b.LastDecision != decision {
		t.Errorf("bob's pulse in the room = %+v, want what he reported", b)
	}
	if d := room.Pulse[0]; d.Availability != "idle" || d.TaskID != nil || d.Files == nil {
		t.Errorf("dave's pulse = %+v, want idle, no task, files []", d)
	}

	// A second update replaces the first.
	if _, err := f.svc.UpdatePulse(ctx, bob, team.UpdatePulseInput{Project: "website-v2", Availability: "away", Doing: "Lunch"}); err != nil {
		t.Fatal(err)
	}
	room, _ = f.svc.ReadRoom(ctx, alice, team.ReadRoomInput{Project: "website-v2"})
	if len(room.Pulse) != 2 {
		t.Fatalf("room has %d pulse entries after bob's second update, want 2", len(room.Pulse))
	}
	for _, p := range room.Pulse {
		if p.AgentID == bob.Agent && (p.Doing != "Lunch" || p.Branch != nil) {
			t.Errorf("bob's pulse = %+v, want only the latest report", p)
		}
	}
	if mobile, _ := f.svc.ReadRoom(ctx, bob, team.ReadRoomInput{Project: "mobile"}); len(mobile.Pulse) != 0 {
		t.Errorf("mobile's room shows %d pulse entries from website-v2", len(mobile.Pulse))
	}
}

func TestUpdatePulseRefusesATaskOfAnotherProject(t *testing.T) {
	f := newFixture(t)
	mob := f.handOff(bob, "mobile", carol.Agent, "code")
	_, err := f.svc.UpdatePulse(ctx, bob, team.UpdatePulseInput{Project: "website-v2", Doing: "x", TaskID: mob.ID})
	wantRefusal(t, err, "task tsk_1 belongs to project mobile, not website-v2")
}

// TestPulseNamesRefuseSpoofing: a file or branch name on Team Pulse that
// holds a control character (C0 with NUL and line breaks, DEL, C1), a line
// or paragraph separator or a bidirectional format character (U+202E makes
// src/<U+202E>gnp.exe read as src/exe.png) is refused at the tool's edge, naming
// the field and the character; nothing is stored. Names in any script pass.
func TestPulseNamesRefuseSpoofing(t *testing.T) {
	f := newFixture(t)
	if _, err := f.svc.UpdatePulse(ctx, bob, team.UpdatePulseInput{Project: "website-v2", Doing: "Fixing", Files: []string{"src/ok.ts"}}); err != nil {
		t.Fatal(err)
	}
	str := func(s string) *string { return &s }
	for _, c := range []struct {
		name   string
		in     team.UpdatePulseInput
		refuse string
	}{
		{"right-to-left override", team.UpdatePulseInput{Files: []string{"src/ok.ts", "src/\u202egnp.exe"}}, "files[1] holds U+202E"},
		{"NUL", team.UpdatePulseInput{Files: []string{"a\x00b.ts"}}, "files[0] holds U+0000"},
		{"line feed", team.UpdatePulseInput{Files: []string{"src/a.ts\nsrc/b.ts"}}, "files[0] holds U+000A"},
		{"carriage return", team.UpdatePulseInput{Files: []string{"a.ts\r"}}, "files[0] holds U+000D"},
		{"DEL", team.UpdatePulseInput{Files: []string{"a\x7f.ts"}}, "files[0] holds U+007F"},
		{"C1 next line", team.UpdatePulseInput{Files: []string{"a\u0085.ts"}}, "files[0] holds U+0085"},
		{"line separator", team.UpdatePulseInput{Files: []string{"a\u2028.ts"}}, "files[0] holds U+2028"},
		{"left-to-right embedding", team.UpdatePulseInput{Files: []string{"\u202ax.ts"}}, "files[0] holds U+202A"},
		{"first strong isolate", team.UpdatePulseInput{Files: []string{"x\u2068.ts"}}, "files[0] holds U+2068"},
		{"pop directional isolate", team.UpdatePulseInput{Files: []string{"x\u2069.ts"}}, "files[0] holds U+2069"},
		{"right-to-left mark", team.UpdatePulseInput{Files: []string{"x\u200f.ts"}}, "files[0] holds U+200F"},
		{"Arabic letter mark", team.UpdatePulseInput{Files: []string{"x\u061c.ts"}}, "files[0] holds U+061C"},
		{"branch with an override", team.UpdatePulseInput{Branch: str("fix/\u202enur"), Files: []string{"a.ts"}}, "branch holds U+202E"},
		{"branch with a line break", team.UpdatePulseInput{Branch: str("main\nevil")}, "branch holds U+000A"},
	} {
		c.in.Project, c.in.Doing = "website-v2", "Spoofing"
		_, err := f.svc.UpdatePulse(ctx, bob, c.in)
		var r *task.Refusal
		if !errors.As(err, &r) || !strings.Contains(r.Msg, c.refuse) || !strings.Contains(r.Msg, "nothing was stored") {
			t.Errorf("%s: err = %v, want a refusal saying %q and that nothing was stored", c.name, err, c.refuse)
		}
	}
	room, err := f.svc.ReadRoom(ctx, alice, team.ReadRoomInput{Project: "website-v2"})
	if err != nil {
		t.Fatal(err)
	}
	if len(room.Pulse) != 1 || room.Pulse[0].Doing != "Fixing" || !slices.Equal(room.Pulse[0].Files, []string{"src/ok.ts"}) {
		t.Errorf("a refused pulse was stored: %+v", room.Pulse)
	}
	names := []string{"docs/café.md", "src/日本語.ts", "src/ملف.ts", "src/קובץ.ts", "app/[id]/page.tsx", "a b/c-d_e.ts"}
	if _, err := f.svc.UpdatePulse(ctx, bob, team.UpdatePulseInput{Project: "website-v2", Doing: "Names", Branch: str("fix/ملف"), Files: names}); err != nil {
		t.Errorf("names in other scripts refused: %v", err)
	}
}
