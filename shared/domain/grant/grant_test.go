package grant_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/domain/grant"
)

type matchCase struct {
	pattern, value string
	want           bool
}

func checkMatches(t *testing.T, field string, cases []matchCase) {
	t.Helper()
	for _, c := range cases {
		if got := grant.Match(field, c.pattern, c.value); got != c.want {
			t.Errorf("Match(%s, %q, %q) = %v, want %v", field, c.pattern, c.value, got, c.want)
		}
	}
}

func TestMatchCommand(t *testing.T) {
	checkMatches(t, "command", []matchCase{
		{"git push origin *", "git push origin main", true},
		{"git push origin *", "git push origin feature/login-v2", true},
		{"git push origin *", "git push origin 'release 2'", true},
		{"git push origin *", `git push origin "main"`, true},
		{"git push origin *", "git push origin HEAD:main", true},
		{"git push origin main", "git push origin main", true},
		// words, not spaces, are compared
		{"git push origin *", " git push origin  main ", true},
		// the option, written by the owner
		{"git push --force origin *", "git push --force origin main", true},
		{"git push origin feature/*", "git push origin feature/x", true},
		{"git commit -m *", "git commit -m 'fix the login bug'", true},
		{"git commit -m *", `git commit -m "fix #12, at last!"`, true},
		{"echo .*", "echo .bashrc", true},
		{"deploy * to *", "deploy web to staging", true},
		{"make test && make lint", "make test && make lint", true},
		// one word, never none or two
		{"git push origin *", "git push origin ", false},
		{"git push origin *", "git push origin", false},
		{"git push origin *", "git push origin main --force", false},
		{"git push origin *", "git push origin main --exec=/tmp/evil", false},
		{"git push origin *", "git push origin --receive-pack='touch /tmp/x' main", false},
		{"git commit -m *", "git commit -m fix bug", false},
		{"git commit -m *", "git commit -m 'x' --amend", false},
		{"make test && *", "make test && make lint", false},
		{"deploy * to *", "deploy web to staging; deploy db", false},
		// options, branch deletions and forced pushes, quoted or not
		{"git push origin *", "git push origin --delete", false},
		{"git push origin *", "git push origin -f", false},
		{"git push origin *", "git push origin '--delete'", false},
		{"git push origin *", `git push origin "--delete"`, false},
		{"git push origin *", "git push origin ''--delete", false},
		{"git push origin *", "git push origin '--receive-pack=touch /tmp/x'", false},
		{"git push origin *", "git push origin :main", false},
		{"git push origin *", "git push origin ':main'", false},
		{"git push origin *", "git push origin +main", false},
		{"git push origin *", `git push origin "+main"`, false},
		{"git push * main", "git push --repo=evil main", false},
		{"git push origin feature/*", "git push origin feature/../../x", false},
		// near misses by name
		{"git push origin main", "git push origin main2", false},
		{"git push origin main", "git push origin mai", false},
		{"git push origin main", "git push origin 'main'", false},
		{"git push origin *", "git push upstream main", false},
		{"git push origin *", "xgit push origin main", false},
		{"git push origin *", "Git push origin main", false},
		// the shell's separators, substitutions, redirections and line breaks
		{"git push origin *", "git push origin main; rm -rf ~", false},
		{"git push origin *", "git push origin main;id", false},
		{"git push origin *", "git push origin main && curl evil.example", false},
		{"git push origin *", "git push origin main&&id", false},
		{"git push origin *", "git push origin main || curl evil.example", false},
		{"git push origin *", "git push origin main | sh", false},
		{"git push origin *", "git push origin main&", false},
		{"git push origin *", "git push origin $(whoami)", false},
		{"git push origin *", "git push origin `whoami`", false},
		{"git push origin *", "git push origin ${IFS}", false},
		{"git push origin *", "git push origin '$(whoami)'", false},
		{"git push origin *", "git push origin <(id)", false},
		{"git push origin *", "git push origin main > /etc/passwd", false},
		{"git push origin *", "git push origin main>>/etc/passwd", false},
		{"git push origin *", "git push origin main\nrm -rf ~", false},
		{"git push origin *", "git push origin main\rrm -rf ~", false},
		{"git push origin *", "git push origin ma\\\nin", false},
		{"git push origin *", "git push origin main\u2028rm -rf ~", false},
		{"git push origin *", "git push origin main\x00", false},
		{"git push origin *", "git push origin $'\\x2d-delete'", false},
		// what a shell would expand outside quotes
		{"git push origin *", "git push origin {main,--delete}", false},
		{"git push origin *", "git push origin ma*", false},
		{"git push origin *", "git push origin ma?n", false},
		{"git push origin *", "git push origin [m]ain", false},
		{"git push origin *", "git push origin ~", false},
		{"git push origin *", "git push origin #main", false},
		{"git push origin *", "git push origin main..evil", false},
		// a quote left open, a backslash, a quoted * in the pattern
		{"git push origin *", "git push origin 'main", false},
		{"git push origin *", "git push origin ma\\in", false},
		{"git push origin '*'", "git push origin 'main'", false},
		{"*", "", false},
	})
}

func TestMatchPath(t *testing.T) {
	checkMatches(t, "file_path", []matchCase{
		{"/srv/app/src/*", "/srv/app/src/main.go", true},
		{"/srv/app/src/*", "/srv/app//src/./main.go", true},
		{"/srv/app/src/*", "/srv/app/src/main.go/", true},
		{"/srv/app/src/*", "/srv/app/src/a*b", true},
		{"/srv/app/src/*.go", "/srv/app/src/main.go", true},
		{"/srv/app/src/", "/srv/app/src", true},
		{"/srv/app/src/*", "/srv/app/src/../.github/workflows/deploy.yml", false},
		{"/srv/app/src/*", "/srv/app/src/../../home/alice/.ssh/authorized_keys", false},
		{"/srv/app/src/*", "/srv/app/src/./../x", false},
		{"/srv/app/src/*", "/srv/app/src/..", false},
		{"/srv/app/src/*", "/srv/app/src/lib/util.go", false},
		{"/srv/app/src/*", "/srv/app/src/.env", false},
		{"/srv/app/src/*", "/srv/app/src/..x", false},
		{"/srv/app/src/*", "/srv/app/src/~", false},
		{"/srv/app/src/*", "/srv/app/src/", false},
		{"/srv/app/src/*", "/srv/app/src", false},
		{"/srv/app/src/*", "/srv/app/srcx/main.go", false},
		{"/srv/app/src/*", "src/main.go", false},
		{"/srv/app/src/*", "/srv/app/src/a\\..\\..\\x", false},
		{"/srv/app/src/*", "/srv/app/src/a\\b", false},
		{"/srv/app/src/*", "/srv/app/src/x\x00.go", false},
		{"/srv/app/src/*", "/srv/app/src/x\n.go", false},
		{"/srv/app/src/*", "", false},
		// ** for a tree, still without hidden names
		{"/srv/app/src/**", "/srv/app/src/lib/util.go", true},
		{"/srv/app/src/**", "/srv/app/src/a/b/c", true},
		{"/srv/app/src/**", "/srv/app/src", true},
		{"/srv/app/src/**", "/srv/app/src/.git/hooks/pre-commit", false},
		{"/srv/app/src/**", "/srv/app/src/lib/.env", false},
		{"/srv/app/src/**", "/srv/app/src/lib/../../x", false},
		{"/srv/app/src/**/*.go", "/srv/app/src/main.go", true},
		{"/srv/app/src/**/*.go", "/srv/app/src/lib/util.go", true},
		{"/srv/app/src/**/*.go", "/srv/app/src/lib/util.js", false},
		{"/srv/app/.github/workflows/*", "/srv/app/.github/workflows/ci.yml", true},
		// relative and absolute never mix; ~ is a name
		{"src/*", "src/main.go", true},
		{"src/*", "./src/main.go", true},
		{"src/*", "/src/main.go", false},
		{"src/*", "../src/main.go", false},
		{"**/main.go", "/main.go", false},
		{"*/main.go", "/main.go", false},
		{"~/notes/*", "~/notes/a.md", true},
		{"*/notes.md", "~/notes.md", false},
		{"/home/alice/*", "~/x", false},
		// a pattern that reaches out never matches, even stored
		{"/srv/app/src/../*", "/srv/app/x", false},
		{"/srv/app/src/../*", "/srv/app/src/../x", false},
		{"C:\\app\\src\\*", "C:\\app\\src\\main.go", true},
		{"C:\\app\\src\\*", "C:\\app\\src\\..\\..\\x", false},
		{"C:\\app\\src\\*", "C:\\app\\src\\lib\\x", false},
	})
	if grant.KindOf("notebook_path") != grant.KindPath || grant.KindOf("path") != grant.KindPath || grant.KindOf("command") != grant.KindCommand || grant.KindOf("url") != grant.KindText {
		t.Error("KindOf reads the fields otherwise than docs/owners.md says")
	}
}

func TestMatchText(t *testing.T) {
	checkMatches(t, "url", []matchCase{
		{"https://api.example.com/v1/*", "https://api.example.com/v1/orders", true},
		{"https://api.example.com/v1/*", "https://api.example.com/v1/orders/42?x=1", true},
		{"https://api.example.com/v1/*", "https://api.example.com/v1/../admin", false},
		{"https://api.example.com/v1/*", "https://api.example.com/v1/orders/..", false},
		{"https://api.example.com/v1/*", "https://api.example.com/v2/orders", false},
		{"https://api.example.com/v1/*", "https://api.example.com/v1/x;y", false},
		{"https://api.example.com/v1/*", "https://api.example.com/v1/x\ny", false},
		{"https://api.example.com/v1/*", "https://api.example.com/v1/x\x00", false},
		// regex characters are literal
		{"rm a.txt", "rm abtxt", false},
		{"ls [ab]", "ls a", false},
		{"ls [ab]", "ls [ab]", true},
		{"echo .*", "echo .bashrc", true},
		{"echo .*", "echo anything", false},
		{"deploy * to *", "deploy web to staging", true},
		{"deploy * to *", "deploy web to staging; deploy db", false},
	})
}

// TestSyntaxExamples holds the examples the page and docs/owners.md show to
// the matcher: each allowed value matches its example pattern, each near
// miss does not, and the pattern itself can be saved.
func TestSyntaxExamples(t *testing.T) {
	fields := map[grant.Kind]string{grant.KindCommand: "command", grant.KindPath: "file_path", grant.KindText: "url"}
	for _, s := range grant.Syntaxes {
		field := fields[s.Kind]
		if grant.SyntaxOf(field).Kind != s.Kind || s.Rule == "" || len(s.Allows) == 0 || len(s.Refuses) == 0 {
			t.Errorf("syntax of %s is incomplete: %+v", s.Kind, s)
		}
		if err := grant.CheckPattern(field, s.Example); err != nil {
			t.Errorf("example %q: %v", s.Example, err)
		}
		for _, v := range s.Allows {
			if !grant.Match(field, s.Example, v) {
				t.Errorf("%s example %q does not allow %q", s.Kind, s.Example, v)
			}
		}
		for _, v := range s.Refuses {
			if grant.Match(field, s.Example, v) {
				t.Errorf("%s example %q allows %q", s.Kind, s.Example, v)
			}
		}
	}
}

// TestTheDocsStateTheSyntax ties the grant section of docs/owners.md to
// Syntaxes: each rule and its examples appear there word for word.
func TestTheDocsStateTheSyntax(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/owners.md")
	if err != nil {
		t.Fatal(err)
	}
	flat := strings.Join(strings.Fields(string(doc)), " ")
	code := func(xs []string) string {
		out := make([]string, len(xs))
		for i, x := range xs {
			out[i] = "`" + x + "`"
		}
		return strings.Join(out, ", ")
	}
	for _, s := range grant.Syntaxes {
		want := fmt.Sprintf("%s E.g. `%s` allows %s, but not %s.", s.Rule, s.Example, code(s.Allows), code(s.Refuses))
		if !strings.Contains(flat, strings.Join(strings.Fields(want), " ")) {
			t.Errorf("docs/owners.md lacks the %s syntax:\n%s", s.Kind, want)
		}
	}
}

func TestMatchRefusesHugeValues(t *testing.T) {
	v := "git push origin " + strings.Repeat("a", grant.MaxValue)
	if grant.Match("command", "git push origin *", v) {
		t.Fatal("a value over MaxValue must not match")
	}
}

func TestAllows(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	pattern := grant.Grant{ID: "grt_1", Project: "web", Owner: "alice", Agent: "alice/builder", Scope: grant.ScopePattern,
		ToolName: "Bash", Field: "command", Pattern: "git push origin *", CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	exact := grant.Grant{ID: "grt_2", Project: "web", Owner: "alice", Agent: "alice/builder", Scope: grant.ScopeCall,
		TaskID: "t1", Fingerprint: "fp1", ToolName: "Bash", CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	call := func(mod func(*grant.Call)) grant.Call {
		c := grant.Call{Project: "web", Agent: "alice/builder", TaskID: "t1", ToolName: "Bash",
			Canonical: []byte(`{"command":"git push origin main","description":"push"}`), Fingerprint: "fp1"}
		if mod != nil {
			mod(&c)
		}
		return c
	}
	revoked := pattern
	at := now
	revoked.RevokedAt = &at
	cases := []struct {
		name string
		g    grant.Grant
		c    grant.Call
		at   time.Time
		want bool
	}{
		{"pattern matches", pattern, call(nil), now, true},
		{"pattern on another task of the project", pattern, call(func(c *grant.Call) { c.TaskID = "t9" }), now, true},
		{"pattern, other agent", pattern, call(func(c *grant.Call) { c.Agent = "alice/writer" }), now, false},
		{"pattern, other project", pattern, call(func(c *grant.Call) { c.Project = "mobile" }), now, false},
		{"pattern, other tool", pattern, call(func(c *grant.Call) { c.ToolName = "Write" }), now, false},
		{"pattern, field missing", pattern, call(func(c *grant.Call) { c.Canonical = []byte(`{"cmd":"git push origin main"}`) }), now, false},
		{"pattern, field not a string", pattern, call(func(c *grant.Call) { c.Canonical = []byte(`{"command":["git push origin main"]}`) }), now, false},
		{"pattern, near miss", pattern, call(func(c *grant.Call) { c.Canonical = []byte(`{"command":"git push origin main;id"}`) }), now, false},
		{"pattern expired", pattern, call(nil), now.Add(time.Hour), false},
		{"pattern revoked", revoked, call(nil), now, false},
		{"exact call", exact, call(nil), now, true},
		{"exact call, other input", exact, call(func(c *grant.Call) { c.Fingerprint = "fp2" }), now, false},
		{"exact call, other task", exact, call(func(c *grant.Call) { c.TaskID = "t2" }), now, false},
		{"exact call, no fingerprint", grant.Grant{Project: "web", Agent: "alice/builder", Scope: grant.ScopeCall, TaskID: "t1", ToolName: "Bash", ExpiresAt: now.Add(time.Hour)},
			call(func(c *grant.Call) { c.Fingerprint = "" }), now, false},
	}
	for _, c := range cases {
		if got := c.g.Allows(c.c, c.at); got != c.want {
			t.Errorf("%s: Allows = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestCheckPattern(t *testing.T) {
	cases := []struct {
		field, pattern string
		ok             bool
	}{
		{"command", "git push origin *", true},
		{"command", "*", false},
		{"command", " * * ", false},
		{"command", "", false},
		{"", "git push", false},
		{"command", "git push\nrm", false},
		{"command", strings.Repeat("a", grant.MaxPattern+1), false},
		{"command", "git push origin \\*", false},
		{"command", "git push origin '*'", false},
		{"command", "git commit -m 'fix", false},
		{"command", "git push origin main\x00", false},
		{"file_path", "/srv/app/src/*", true},
		{"file_path", "/srv/app/src/**/*.go", true},
		{"file_path", "src/*", true},
		{"file_path", "/srv/app/../*", false},
		{"file_path", "/srv/a**/x", false},
		{"file_path", "/**", false},
		{"file_path", "/*", false},
		{"path", "*/*", false},
		{"url", "https://api.example.com/*", true},
		{"url", "https://api.example.com/*\u2028", false},
	}
	for _, c := range cases {
		if err := grant.CheckPattern(c.field, c.pattern); (err == nil) != c.ok {
			t.Errorf("CheckPattern(%q, %q) = %v, want ok=%v", c.field, c.pattern, err, c.ok)
		}
	}
	for hours, ok := range map[int]bool{0: false, 1: true, 72: true, 73: false, -1: false} {
		if err := grant.CheckHours(hours); (err == nil) != ok {
			t.Errorf("CheckHours(%d) = %v, want ok=%v", hours, err, ok)
		}
	}
}

func TestDefaultField(t *testing.T) {
	cases := []struct{ in, field, value string }{
		{`{"command":"git push origin main","description":"push"}`, "command", "git push origin main"},
		{`{"content":"x","file_path":"/tmp/a"}`, "file_path", "/tmp/a"},
		{`{"notebook_path":"/tmp/a.ipynb","source":"x"}`, "notebook_path", "/tmp/a.ipynb"},
		{`{"content":"x","file_name":"a"}`, "content", "x"},
		{`{"n":1,"url":"https://example.com"}`, "url", "https://example.com"},
		{`{"n":1}`, "", ""},
		{`[]`, "", ""},
	}
	for _, c := range cases {
		f, v := grant.DefaultField([]byte(c.in))
		if f != c.field || v != c.value {
			t.Errorf("DefaultField(%s) = %q, %q; want %q, %q", c.in, f, v, c.field, c.value)
		}
	}
}

// TestAllowsRefusesTheReviewedNearMisses replays the security review's
// attacks on pattern grants: a path `*` that crossed `/` and `..`, and a
// command `*` that took options, several arguments and refspec deletions.
func TestAllowsRefusesTheReviewedNearMisses(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	g := func(tool, field, pattern string) grant.Grant {
		return grant.Grant{ID: "grt_1", Project: "web", Owner: "alice", Agent: "alice/builder", Scope: grant.ScopePattern,
			ToolName: tool, Field: field, Pattern: pattern, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	}
	call := func(tool, field, value string) grant.Call {
		in, _ := json.Marshal(map[string]string{field: value})
		return grant.Call{Project: "web", Agent: "alice/builder", TaskID: "t1", ToolName: tool, Canonical: in}
	}
	src := g("Write", "file_path", "/home/alice/proj/src/*")
	push := g("Bash", "command", "git push origin *")
	cases := []struct {
		g     grant.Grant
		value string
		want  bool
	}{
		{src, "/home/alice/proj/src/app.go", true},
		{src, "/home/alice/proj/src/../../home/alice/.ssh/authorized_keys", false},
		{src, "/home/alice/proj/src/../.github/workflows/deploy.yml", false},
		{push, "git push origin main", true},
		{push, "git push origin --receive-pack='touch /tmp/x' main", false},
		{push, "git push origin main --exec=/tmp/evil", false},
		{push, "git push origin :main", false},
		{push, "git push origin --delete main", false},
	}
	for _, c := range cases {
		if got := c.g.Allows(call(c.g.ToolName, c.g.Field, c.value), now); got != c.want {
			t.Errorf("%s %q allows %q = %v, want %v", c.g.Field, c.g.Pattern, c.value, got, c.want)
		}
	}
}
