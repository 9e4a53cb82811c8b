package runner

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/domain/pulse"
)

func TestTreeFromStatus(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.ts"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		out  string
		want []string
	}{
		{"modified and untracked", " M a.ts\x00?? new/b.ts\x00", []string{"a.ts", "new/b.ts"}},
		{"the .git dir is never listed", "?? .git/index\x00?? .git\x00 M a.ts\x00", []string{"a.ts"}},
		{"a deleted file", " D gone.ts\x00", []string{"gone.ts"}},
		{"malformed entries are skipped", "M\x00xx\x00\x00 M a.ts\x00", []string{"a.ts"}},
		{"a name with spaces", "?? my file.ts\x00", []string{"my file.ts"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := treeFromStatus(root, []byte(tc.out))
			var got []string
			for p := range tr.Files {
				got = append(got, p)
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("files %v, want %v", got, tc.want)
			}
		})
	}
	if tr := treeFromStatus(root, []byte(" D gone.ts\x00")); !strings.HasSuffix(tr.Files["gone.ts"], "gone") {
		t.Fatalf("a file not there is fingerprinted gone: %q", tr.Files["gone.ts"])
	}
}

func TestChangedSince(t *testing.T) {
	tree := func(kv ...string) treeState {
		t := treeState{Files: map[string]string{}}
		for i := 0; i+1 < len(kv); i += 2 {
			t.Files[kv[i]] = kv[i+1]
		}
		return t
	}
	tests := []struct {
		name          string
		before, after treeState
		want          []string
	}{
		{"nothing changed", tree("a", "1"), tree("a", "1"), nil},
		{"a new file", tree("a", "1"), tree("a", "1", "b", "1"), []string{"b"}},
		{"a changed file", tree("a", "1", "b", "1"), tree("a", "2", "b", "1"), []string{"a"}},
		{"a file back to its commit", tree("a", "1", "b", "1"), tree("b", "1"), []string{"a"}},
		{"sorted", tree(), tree("z", "1", "m", "1", "a", "1"), []string{"a", "m", "z"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.after.changedSince(tc.before); !slices.Equal(got, tc.want) {
				t.Fatalf("changed %v, want %v", got, tc.want)
			}
		})
	}
}

// write puts content in the checkout's file rel.
func write(t *testing.T, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestShellChangedClaims(t *testing.T) {
	now := time.Now()
	bob := pulse.Entry{AgentID: "bob/coder", Project: "website-v2", TaskID: str("tsk_theirs"), Files: []string{"src/held.ts"}, UpdatedAt: now.Add(-time.Minute)}
	many := func(t *testing.T, root string) {
		for i := range maxShellClaims + 5 {
			write(t, root, fmt.Sprintf("gen/f%02d.ts", i), "x")
		}
	}
	tests := []struct {
		name        string
		change      func(t *testing.T, root string)
		wantClaimed []string
		wantCount   int
		wantNote    []string
		noNote      bool
	}{
		{name: "a file written by the shell is claimed", change: func(t *testing.T, root string) { write(t, root, "src/a.ts", "x\n") },
			wantClaimed: []string{"src/a.ts"}, noNote: true},
		{name: "a teammate's file is not claimed; the run is told who holds it",
			change: func(t *testing.T, root string) {
				write(t, root, "src/held.ts", "mine\n")
				write(t, root, "src/b.ts", "x")
			},
			wantClaimed: []string{"src/b.ts"}, wantNote: []string{"src/held.ts", "bob/coder holds src/held.ts for task tsk_theirs", "held by a teammate"}},
		{name: "at most maxShellClaims paths a call", change: many, wantCount: maxShellClaims,
			wantNote: []string{fmt.Sprintf("only %d are claimed", maxShellClaims)}},
		{name: "nothing changed, nothing claimed", change: func(*testing.T, string) {}, noNote: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newClaimRig(t, pulse.GuardDeny)
			r.room.entries = []pulse.Entry{bob}
			write(t, r.root, "src/held.ts", "theirs\n")
			markTree(context.Background(), r.session, r.root)
			tc.change(t, r.root)
			note := shellChanged(context.Background(), r.env, r.ce, r.room)
			for _, w := range tc.wantNote {
				if !strings.Contains(note, w) {
					t.Errorf("note %q does not say %q", note, w)
				}
			}
			if tc.noNote && note != "" {
				t.Errorf("note %q, want none", note)
			}
			own := r.room.own()
			var files []string
			if own != nil {
				files = own.Files
			}
			if slices.Contains(files, "src/held.ts") {
				t.Errorf("the teammate's file was claimed: %v", files)
			}
			for _, f := range tc.wantClaimed {
				if !slices.Contains(files, f) {
					t.Errorf("pulse lists %v, want %s", files, f)
				}
			}
			if tc.wantCount > 0 && len(files) != tc.wantCount {
				t.Errorf("claimed %d files, want %d", len(files), tc.wantCount)
			}
			if len(tc.wantClaimed) == 0 && tc.wantCount == 0 && len(r.room.updates) != 0 {
				t.Errorf("pulse updated with nothing to claim: %+v", r.room.updates)
			}
			// Claimed once: the same comparison again claims nothing more.
			before := len(r.room.updates)
			if again := shellChanged(context.Background(), r.env, r.ce, r.room); again != "" || len(r.room.updates) != before {
				t.Errorf("a second comparison with nothing new: note %q, %d updates (was %d)", again, len(r.room.updates), before)
			}
		})
	}
}

func TestShellChangedNoGit(t *testing.T) {
	dir := t.TempDir()
	r := newClaimRig(t, pulse.GuardDeny)
	r.ce.ProjectDir = dir
	markTree(context.Background(), r.session, dir)
	write(t, dir, "a.ts", "x")
	if note := shellChanged(context.Background(), r.env, r.ce, r.room); note != "" || len(r.room.updates) != 0 || r.room.settingsCalls != 0 {
		t.Fatalf("a work dir that is no git checkout claims nothing from the shell: note %q, updates %v", note, r.room.updates)
	}
	if _, err := os.Stat(filepath.Join(r.session, treeFile)); err == nil {
		t.Fatal("no picture of a work dir that is no git checkout")
	}
}

func TestClaudePostToolUseClaims(t *testing.T) {
	tests := []struct {
		name, tool string
		want       bool
	}{
		{"after Bash, what it changed is claimed", "Bash", true},
		{"after another tool, nothing", "Read", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newClaimRig(t, pulse.GuardDeny)
			r.room.entries = []pulse.Entry{{AgentID: "bob/coder", Project: "website-v2", Files: []string{"src/held.ts"}, UpdatedAt: time.Now()}}
			markTree(context.Background(), r.session, r.root)
			write(t, r.root, "src/a.ts", "x")
			write(t, r.root, "src/held.ts", "x")
			in := `{"hook_event_name":"PostToolUse","tool_name":"` + tc.tool + `","tool_input":{"command":"echo x > src/a.ts"},"tool_response":{}}`
			var out bytes.Buffer
			if err := GuardedHook(context.Background(), strings.NewReader(in), &out, r.env, r.ce, r.asker, r.room); err != nil {
				t.Fatal(err)
			}
			own := r.room.own()
			claimed := own != nil && slices.Contains(own.Files, "src/a.ts")
			if claimed != tc.want {
				t.Fatalf("claimed %v, want %v (pulse %+v)", claimed, tc.want, own)
			}
			told := strings.Contains(out.String(), `"hookEventName":"PostToolUse"`) && strings.Contains(out.String(), "src/held.ts")
			if told != tc.want {
				t.Fatalf("answer %q: told of the held file %v, want %v", out.String(), told, tc.want)
			}
			if len(r.asker.asked) != 0 {
				t.Fatalf("a post-tool call asked the owner: %v", r.asker.asked)
			}
		})
	}
}
