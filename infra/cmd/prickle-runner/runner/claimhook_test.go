package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/domain/pulse"
)

// fakeRoom is Team Pulse as Prickle keeps it: read_room's pulse entries,
// update_pulse replacing the caller's entry, and the project's settings.
type fakeRoom struct {
	mu                            sync.Mutex
	settings                      ClaimSettings
	settingsErr, pulseErr, updErr error
	entries                       []pulse.Entry
	updates                       []PulseUpdate
	settingsCalls, reads          int
	tokens                        []string
	readDelay                     time.Duration
}

func (f *fakeRoom) ClaimSettings(_ context.Context, token, project string) (ClaimSettings, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.settingsCalls++
	f.tokens = append(f.tokens, token)
	s := f.settings
	s.Project = project
	return s, f.settingsErr
}

func (f *fakeRoom) Pulse(_ context.Context, token, _ string) ([]pulse.Entry, error) {
	f.mu.Lock()
	f.reads++
	f.tokens = append(f.tokens, token)
	out := slices.Clone(f.entries)
	err := f.pulseErr
	f.mu.Unlock()
	time.Sleep(f.readDelay)
	return out, err
}

func (f *fakeRoom) UpdatePulse(_ context.Context, token string, u PulseUpdate) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tokens = append(f.tokens, token)
	if f.updErr != nil {
		return f.updErr
	}
	f.updates = append(f.updates, u)
	e := pulse.Entry{AgentID: f.settings.Agent, Project: u.Project, Availability: u.Availability, Doing: u.Doing, TaskID: u.TaskID,
		Branch: u.Branch, Files: slices.Clone(u.Files), LastDecision: u.LastDecision, UpdatedAt: time.Now()}
	f.entries = slices.DeleteFunc(f.entries, func(x pulse.Entry) bool { return x.AgentID == e.AgentID })
	f.entries = append(f.entries, e)
	return nil
}

func (f *fakeRoom) own() *pulse.Entry {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, e := range f.entries {
		if e.AgentID == f.settings.Agent {
			return &e
		}
	}
	return nil
}

func str(s string) *string { return &s }

// claimAsker is fakeAsker that also records the reason each call was asked with.
type claimAsker struct {
	fakeAsker
	reasons []string
}

func (c *claimAsker) RequestStep(ctx context.Context, token string, a StepAsk) (StepAnswer, error) {
	c.reasons = append(c.reasons, a.Reason)
	return c.fakeAsker.RequestStep(ctx, token, a)
}

// claimRig is one run of alice/writer on task tsk_mine in a git checkout on
// branch feature/x, with its session dir.
type claimRig struct {
	root, session string
	env           HookEnv
	ce            ClaimEnv
	room          *fakeRoom
	asker         *claimAsker
}

func newClaimRig(t *testing.T, guard string, allowed ...string) *claimRig {
	t.Helper()
	root := gitRepo(t, "feature/x")
	session := filepath.Join(t.TempDir(), "sessions", "alice_writer", "tsk_mine")
	return &claimRig{
		root: root, session: session,
		env:   HookEnv{RunToken: "prk_r_run", Allowed: allowed, SessionDir: session},
		ce:    ClaimEnv{Project: "website-v2", TaskID: "tsk_mine", ProjectDir: root},
		room:  &fakeRoom{settings: ClaimSettings{Agent: "alice/writer", FileGuard: guard, PulseStaleSeconds: 1800}},
		asker: &claimAsker{},
	}
}

// edit is the hook input of a tool call (its one-call transcript written) editing file.
func (r *claimRig) edit(t *testing.T, tool, field, file string) string {
	t.Helper()
	in, _ := json.Marshal(map[string]any{"hook_event_name": "PreToolUse", "tool_name": tool, "tool_use_id": "toolu_1",
		"transcript_path": transcript(t, "toolu_1"), "cwd": r.root,
		"tool_input": map[string]string{field: file, "old_string": "a", "new_string": "b"}})
	return string(in)
}

// hook runs the guarded hook and reads its answer (zero when it wrote none).
func (r *claimRig) hook(t *testing.T, in string) (out struct{ Decision, Reason, Context string }, raw string) {
	t.Helper()
	var b bytes.Buffer
	if err := GuardedHook(context.Background(), strings.NewReader(in), &b, r.env, r.ce, r.asker, r.room); err != nil {
		t.Fatal(err)
	}
	if b.Len() == 0 {
		return out, ""
	}
	var o struct {
		H struct {
			Event    string `json:"hookEventName"`
			Decision string `json:"permissionDecision"`
			Reason   string `json:"permissionDecisionReason"`
			Context  string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal(b.Bytes(), &o); err != nil || o.H.Event != "PreToolUse" {
		t.Fatalf("answer %q: %v", b.String(), err)
	}
	out.Decision, out.Reason, out.Context = o.H.Decision, o.H.Reason, o.H.Context
	return out, b.String()
}

func TestGuardedHookDecisions(t *testing.T) {
	now := time.Now()
	since := now.Add(-5 * time.Minute)
	bobHolds := func(files ...string) pulse.Entry {
		return pulse.Entry{AgentID: "bob/coder", Owner: "bob", Project: "website-v2", Availability: "working", Doing: "Fixing the header",
			TaskID: str("tsk_theirs"), Files: files, UpdatedAt: since}
	}
	stale := pulse.Entry{AgentID: "carol/tester", Project: "website-v2", TaskID: str("tsk_old"), Files: []string{"src/app.ts"}, UpdatedAt: now.Add(-31 * time.Minute)}
	pending := StepAnswer{Behavior: "deny", Status: "pending", StepID: "stp_1", Message: "still waiting for your owner"}
	allowed := StepAnswer{Behavior: "allow", Status: "consumed", StepID: "stp_1", Message: "allowed"}
	refused := StepAnswer{Behavior: "deny", Status: "refused", StepID: "stp_1", Message: "refused by your owner"}
	held := "bob/coder holds src/app.ts for task tsk_theirs since " + clock(since, now)
	tests := []struct {
		name      string
		guard     string
		allowed   []string
		entries   []pulse.Entry
		file      string // relative to the root, or absolute
		answer    StepAnswer
		setup     func(*fakeRoom)
		decision  string // "" when the hook gives no decision (Claude Code's own check decides)
		says      string // in the reason (a decision) or the context (none)
		askReason string // the reason the owner was asked with ("" when not asked)
		claimed   []string
	}{
		{name: "free, allow-listed: goes ahead and is claimed", guard: "deny", allowed: []string{"Edit"}, file: "src/app.ts", claimed: []string{"src/app.ts"}},
		{name: "held by a teammate, deny: stopped, the teammate named", guard: "deny", allowed: []string{"Edit"}, entries: []pulse.Entry{bobHolds("src/app.ts")},
			file: "src/app.ts", decision: "deny", says: held},
		{name: "patterns in a pulse hold only files named so: free", guard: "deny", allowed: []string{"Edit"},
			entries: []pulse.Entry{bobHolds("*", "*/*", "*/*/*", "src/*", "src/app.?s", "src/[a-z]pp.ts", "**")},
			file:    "src/app.ts", claimed: []string{"src/app.ts"}},
		{name: "a claim written unclean still names its file: stopped", guard: "deny", allowed: []string{"Edit"}, entries: []pulse.Entry{bobHolds("./src//lib/../app.ts")},
			file: "src/app.ts", decision: "deny", says: "bob/coder holds src/app.ts for task tsk_theirs"},
		{name: "held, warn: goes ahead with a warning, not claimed", guard: "warn", allowed: []string{"Edit"}, entries: []pulse.Entry{bobHolds("src/app.ts")},
			file: "src/app.ts", says: held + "; it is released when bob/coder's Team Pulse lets it go, or at " + clock(since.Add(30*time.Minute), now)},
		{name: "held, ask, allow-listed: the owner is asked, the run pauses", guard: "ask", allowed: []string{"Edit", "Read"}, entries: []pulse.Entry{bobHolds("src/app.ts")},
			file: "src/app.ts", answer: pending, decision: "defer", says: "still waiting", askReason: held},
		{name: "held, ask: the owner allows it once, the holder keeps the file", guard: "ask", allowed: []string{"Edit(src/**)"}, entries: []pulse.Entry{bobHolds("src/app.ts")},
			file: "src/app.ts", answer: allowed, decision: "allow", askReason: held},
		{name: "held in a stale pulse: free", guard: "deny", allowed: []string{"Edit"}, entries: []pulse.Entry{stale}, file: "src/app.ts", claimed: []string{"src/app.ts"}},
		{name: "free, not allow-listed, the owner allows: claimed", guard: "deny", file: "src/app.ts", answer: allowed, decision: "allow", askReason: "-", claimed: []string{"src/app.ts"}},
		{name: "free, not allow-listed, still waiting: not claimed yet", guard: "deny", file: "src/app.ts", answer: pending, decision: "defer", askReason: "-"},
		{name: "free, not allow-listed, refused: not claimed", guard: "deny", file: "src/app.ts", answer: refused, decision: "deny", says: "refused", askReason: "-"},
		{name: "outside the repository: neither claimed nor guarded", guard: "deny", allowed: []string{"Edit"}, entries: []pulse.Entry{bobHolds("src/app.ts")},
			file: "/etc/hosts"},
		{name: "a Prickle without file claims: the edit as before", guard: "deny", allowed: []string{"Edit"}, file: "src/app.ts",
			setup: func(f *fakeRoom) { f.settingsErr = fmt.Errorf("project settings: %w", ErrNoClaims) }},
		{name: "settings unreadable: stopped", guard: "deny", allowed: []string{"Edit"}, file: "src/app.ts", decision: "deny", says: "could not read the project's file claims",
			setup: func(f *fakeRoom) { f.settingsErr = errors.New("HTTP 502") }},
		{name: "Team Pulse unreadable, deny: stopped", guard: "deny", allowed: []string{"Edit"}, file: "src/app.ts", decision: "deny", says: "could not read Team Pulse",
			setup: func(f *fakeRoom) { f.pulseErr = errors.New("HTTP 502") }},
		{name: "Team Pulse unreadable, warn: goes ahead unchecked", guard: "warn", allowed: []string{"Edit"}, file: "src/app.ts", says: "was not checked",
			setup: func(f *fakeRoom) { f.pulseErr = errors.New("HTTP 502") }},
		{name: "the claim cannot be reported: goes ahead, the model told", guard: "deny", allowed: []string{"Edit"}, file: "src/app.ts", says: "could not claim src/app.ts",
			setup: func(f *fakeRoom) { f.updErr = errors.New("HTTP 502") }},
		{name: "my own pulse holds it: free", guard: "deny", allowed: []string{"Edit"}, file: "src/app.ts", claimed: []string{"src/app.ts"},
			entries: []pulse.Entry{{AgentID: "alice/writer", TaskID: str("tsk_mine"), Files: []string{"src/app.ts"}, UpdatedAt: since}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newClaimRig(t, tt.guard, tt.allowed...)
			r.room.entries = tt.entries
			r.asker.answer = tt.answer
			if tt.setup != nil {
				tt.setup(r.room)
			}
			file := tt.file
			if !filepath.IsAbs(file) {
				file = filepath.Join(r.root, file)
			}
			got, raw := r.hook(t, r.edit(t, "Edit", "file_path", file))
			if got.Decision != tt.decision {
				t.Fatalf("decision %q (%s), want %q", got.Decision, raw, tt.decision)
			}
			said := got.Context
			if got.Decision != "" {
				said = got.Reason
			}
			if !strings.Contains(said, tt.says) || (tt.says == "" && got.Context != "") {
				t.Errorf("said %q, want %q", said, tt.says)
			}
			switch {
			case tt.askReason == "" && len(r.asker.asked) != 0:
				t.Errorf("the owner was asked %q", r.asker.asked)
			case tt.askReason != "" && len(r.asker.asked) != 1:
				t.Errorf("the owner was asked %d times, want once", len(r.asker.asked))
			case tt.askReason != "" && tt.askReason != "-" && !strings.Contains(r.asker.reasons[0], tt.askReason):
				t.Errorf("asked with the reason %q, want it to say %q", r.asker.reasons[0], tt.askReason)
			}
			if len(tt.claimed) == 0 {
				if len(r.room.updates) != 0 {
					t.Errorf("the pulse was updated: %+v", r.room.updates)
				}
				return
			}
			if len(r.room.updates) != 1 {
				t.Fatalf("pulse updates %+v, want one", r.room.updates)
			}
			u := r.room.updates[0]
			if !slices.Equal(u.Files, tt.claimed) || u.TaskID == nil || *u.TaskID != "tsk_mine" || u.Branch == nil || *u.Branch != "feature/x" || u.Project != "website-v2" {
				t.Errorf("pulse update %+v (task %v, branch %v), want files %q on task tsk_mine, branch feature/x", u, u.TaskID, u.Branch, tt.claimed)
			}
			c, err := LoadClaims(r.session)
			if err != nil || !slices.Equal(c.Files, tt.claimed) || c.TaskID != "tsk_mine" || c.Agent != "alice/writer" {
				t.Errorf("claims kept in the session dir: %+v (%v)", c, err)
			}
			for _, tok := range r.room.tokens {
				if tok != "prk_r_run" {
					t.Errorf("Prickle was called with %q, not the run token", tok)
				}
			}
		})
	}
}

// TestAHardLinkToAHeldFileIsHeld: an edit of hard.ts, a hard link to the
// src/a.ts a teammate holds, is the same file and is stopped; so is an edit
// through a symbolic link to it. A file that only shares its content is free.
func TestAHardLinkToAHeldFileIsHeld(t *testing.T) {
	since := time.Now().Add(-5 * time.Minute)
	for _, tt := range []struct {
		name, file, says string
		make             func(root string) error
	}{
		{"a hard link", "hard.ts", "bob/coder holds hard.ts (the same file as its claim src/a.ts)",
			func(root string) error {
				return os.Link(filepath.Join(root, "src", "a.ts"), filepath.Join(root, "hard.ts"))
			}},
		{"a hard link in another folder", "src/lib/b.ts", "bob/coder holds src/lib/b.ts (the same file as its claim src/a.ts)",
			func(root string) error {
				return os.Link(filepath.Join(root, "src", "a.ts"), filepath.Join(root, "src", "lib", "b.ts"))
			}},
		{"a symbolic link", "soft.ts", "bob/coder holds src/a.ts for task tsk_theirs",
			func(root string) error {
				return os.Symlink(filepath.Join("src", "a.ts"), filepath.Join(root, "soft.ts"))
			}},
		{"a copy", "copy.ts", "",
			func(root string) error {
				return os.WriteFile(filepath.Join(root, "copy.ts"), []byte("export const a = 1\n"), 0o600)
			}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newClaimRig(t, "deny", "Edit")
			if err := os.WriteFile(filepath.Join(r.root, "src", "a.ts"), []byte("export const a = 1\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := tt.make(r.root); err != nil {
				t.Fatal(err)
			}
			r.room.entries = []pulse.Entry{{AgentID: "bob/coder", Project: "website-v2", TaskID: str("tsk_theirs"), Files: []string{"src/a.ts"}, UpdatedAt: since}}
			got, raw := r.hook(t, r.edit(t, "Edit", "file_path", filepath.Join(r.root, tt.file)))
			if tt.says == "" {
				if got.Decision != "" || len(r.room.updates) != 1 {
					t.Fatalf("a copy of a held file: %s, updates %+v; want it free and claimed", raw, r.room.updates)
				}
				return
			}
			if got.Decision != "deny" || !strings.Contains(got.Reason, tt.says) {
				t.Fatalf("edit of %s: %s; want it stopped saying %q", tt.file, raw, tt.says)
			}
			if len(r.room.updates) != 0 {
				t.Errorf("a held file was claimed: %+v", r.room.updates)
			}
		})
	}
}

// Every edit tool claims the file its input names; other tools never touch Team Pulse.
func TestGuardedHookTools(t *testing.T) {
	tests := []struct {
		tool, field, file string
		claimed           bool
	}{
		{"Edit", "file_path", "src/a.ts", true},
		{"Write", "file_path", "docs/new.md", true},
		{"MultiEdit", "file_path", "src/b.ts", true},
		{"NotebookEdit", "notebook_path", "nb/analysis.ipynb", true},
		{"Write", "file_path", "./src/../c.ts", true}, // relative to the call's cwd
		{"Read", "file_path", "src/a.ts", false},
		{"Bash", "command", "echo x > src/a.ts", false},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+tt.file, func(t *testing.T) {
			r := newClaimRig(t, "deny", "Edit", "Write", "MultiEdit", "NotebookEdit", "Read", "Bash")
			file := tt.file
			if tt.field != "command" && !strings.HasPrefix(file, "./") {
				file = filepath.Join(r.root, file)
			}
			if _, raw := r.hook(t, r.edit(t, tt.tool, tt.field, file)); raw != "" {
				t.Errorf("answer %s, want none", raw)
			}
			if !tt.claimed {
				if r.room.settingsCalls+r.room.reads+len(r.room.updates) != 0 {
					t.Errorf("a %s call touched Team Pulse", tt.tool)
				}
				return
			}
			want, _ := claimPath(r.root, r.root, file)
			if len(r.room.updates) != 1 || !slices.Equal(r.room.updates[0].Files, []string{want}) {
				t.Errorf("updates %+v, want %s claimed", r.room.updates, want)
			}
		})
	}
}

// A run's claims merge with what its agent's live pulse says, and a
// resumed run (or one after a runner restart) claims its task's files
// again, except one a teammate took meanwhile.
func TestGuardedHookKeepsClaiming(t *testing.T) {
	r := newClaimRig(t, "deny", "Edit")
	now := time.Now()
	if err := SaveClaims(r.session, Claims{Agent: "alice/writer", Project: "website-v2", TaskID: "tsk_mine", Files: []string{"src/old.ts", "src/taken.ts"}}); err != nil {
		t.Fatal(err)
	}
	r.room.entries = []pulse.Entry{
		{AgentID: "alice/writer", Availability: "working", Doing: "Writing the plan", TaskID: str("tsk_mine"), Files: []string{"docs/plan.md"},
			LastDecision: str("Plan first."), UpdatedAt: now.Add(-time.Minute)},
		{AgentID: "bob/coder", TaskID: str("tsk_theirs"), Files: []string{"src/taken.ts"}, UpdatedAt: now.Add(-time.Minute)},
	}
	if got, raw := r.hook(t, r.edit(t, "Edit", "file_path", filepath.Join(r.root, "src/app.ts"))); got.Decision != "" {
		t.Fatalf("answer %s", raw)
	}
	u := r.room.updates[0]
	if want := []string{"src/old.ts", "src/app.ts", "docs/plan.md"}; !slices.Equal(u.Files, want) {
		t.Errorf("files %q, want %q: the task's claims, then what the pulse listed", u.Files, want)
	}
	if u.Doing != "Writing the plan" || u.LastDecision == nil || *u.LastDecision != "Plan first." {
		t.Errorf("what the agent said of its task was not kept: %+v", u)
	}
	if c, _ := LoadClaims(r.session); !slices.Equal(c.Files, []string{"src/old.ts", "src/app.ts"}) {
		t.Errorf("claims %q", c.Files)
	}
	// Another task's claims (an earlier task of this session dir) start afresh.
	r.ce.TaskID = "tsk_next"
	r.hook(t, r.edit(t, "Edit", "file_path", filepath.Join(r.root, "src/next.ts")))
	if c, _ := LoadClaims(r.session); !slices.Equal(c.Files, []string{"src/next.ts"}) || c.TaskID != "tsk_next" {
		t.Errorf("claims of another task %+v", c)
	}
}

// Edits made at once (one model message with several edits: Claude Code
// runs their hooks together) each claim their file: the claims lock
// serialises the agent's read-modify-write of its pulse.
func TestGuardedHookConcurrentEdits(t *testing.T) {
	r := newClaimRig(t, "deny", "Edit")
	r.room.readDelay = 20 * time.Millisecond
	var wg sync.WaitGroup
	files := []string{"a.ts", "b.ts", "c.ts", "d.ts", "e.ts"}
	for _, f := range files {
		in := r.edit(t, "Edit", "file_path", filepath.Join(r.root, "src", f))
		wg.Go(func() { r.hook(t, in) })
	}
	wg.Wait()
	own := r.room.own()
	if own == nil {
		t.Fatal("no pulse")
	}
	got := slices.Sorted(slices.Values(own.Files))
	if want := []string{"src/a.ts", "src/b.ts", "src/c.ts", "src/d.ts", "src/e.ts"}; !slices.Equal(got, want) {
		t.Errorf("the pulse lists %q, want all of %q", got, want)
	}
}

// A path Team Pulse cannot list (over 300 characters) is not claimed, and the model is told.
func TestGuardedHookLongPath(t *testing.T) {
	r := newClaimRig(t, "deny", "Edit")
	long := filepath.Join(r.root, strings.Repeat("d", 200), strings.Repeat("f", 120)+".ts")
	got, raw := r.hook(t, r.edit(t, "Edit", "file_path", long))
	if got.Decision != "" || !strings.Contains(got.Context, "over 300 characters") || len(r.room.updates) != 0 {
		t.Errorf("answer %s, updates %+v", raw, r.room.updates)
	}
}

func TestPulseFiles(t *testing.T) {
	many := func(prefix string, n int) []string {
		var out []string
		for i := range n {
			out = append(out, fmt.Sprintf("%s%d", prefix, i))
		}
		return out
	}
	tests := []struct {
		name         string
		listed, mine []string
		want         []string
	}{
		{"mine first, then the rest once", []string{"b", "a"}, []string{"a", "c"}, []string{"a", "c", "b"}},
		{"the bound keeps mine", many("l", 50), []string{"m"}, append([]string{"m"}, many("l", 49)...)},
		{"too many of mine: the newest", nil, many("m", 55), many("m", 55)[5:]},
	}
	for _, tt := range tests {
		if got := pulseFiles(tt.listed, tt.mine); !slices.Equal(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
	if got := withFile([]string{"a", "b"}, "a"); !slices.Equal(got, []string{"b", "a"}) {
		t.Errorf("withFile moves a file to the newest: %q", got)
	}
}

func TestWithContext(t *testing.T) {
	if got := string(withContext(nil, "note")); got != `{"hookSpecificOutput":{"additionalContext":"note","hookEventName":"PreToolUse"}}`+"\n" {
		t.Errorf("no answer + note = %s", got)
	}
	allow := []byte(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"ok","updatedInput":{"x":1}}}`)
	var o map[string]map[string]any
	if err := json.Unmarshal(withContext(allow, "note"), &o); err != nil {
		t.Fatal(err)
	}
	if h := o["hookSpecificOutput"]; h["permissionDecision"] != "allow" || h["additionalContext"] != "note" || h["updatedInput"] == nil {
		t.Errorf("allow + note = %v", h)
	}
	if got := withContext(allow, ""); !bytes.Equal(got, allow) {
		t.Errorf("no note changed the answer: %s", got)
	}
}

// Under warn, an edit the allow-list does not cover is asked as any call
// is, the holder named; allowed, it goes ahead with the warning, unclaimed.
func TestGuardedHookWarnAsksWhatTheAllowListDoesNot(t *testing.T) {
	r := newClaimRig(t, "warn")
	r.room.entries = []pulse.Entry{{AgentID: "bob/coder", TaskID: str("tsk_theirs"), Files: []string{"src/app.ts"}, UpdatedAt: time.Now()}}
	r.asker.answer = StepAnswer{Behavior: "allow", Status: "consumed", StepID: "stp_1", Message: "allowed"}
	got, raw := r.hook(t, r.edit(t, "Edit", "file_path", filepath.Join(r.root, "src/app.ts")))
	if got.Decision != "allow" || !strings.Contains(got.Context, "bob/coder holds src/app.ts") || !strings.Contains(got.Context, "file guard warn") {
		t.Errorf("answer %s", raw)
	}
	if len(r.asker.reasons) != 1 || !strings.Contains(r.asker.reasons[0], "bob/coder holds src/app.ts for task tsk_theirs") {
		t.Errorf("asked with %q", r.asker.reasons)
	}
	if len(r.room.updates) != 0 {
		t.Errorf("claimed: %+v", r.room.updates)
	}
}
