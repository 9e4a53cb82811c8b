package grant

import (
	"errors"
	"path"
	"strings"
)

// A path pattern and the path are compared name by name (the parts between
// slashes), after both are cleaned: `//`, `/./` and a trailing `/` are
// dropped, so "/a//b/./c/" is "/a/b/c".
//
//   - a path with a `..` name (between `/` or `\`) never matches: a grant
//     for "src/*" must not reach "src/../.ssh/authorized_keys";
//   - in a name, `*` matches any run of characters but `/` and `\`;
//   - `**`, alone between slashes, matches any number of names, none
//     included: "src/**" covers the whole tree under src;
//   - neither `*` at the start of a name nor `**` matches a name that starts
//     with `.` or `~` (".git", ".env", "~"): a pattern names those itself
//     ("src/.github/**");
//   - an absolute pattern matches absolute paths only, a relative one
//     relative paths only; `~` is a name like any other, never expanded.

// hasDotDot reports a `..` name in s, between `/` or `\`.
func hasDotDot(s string) bool {
	for name := range strings.FieldsFuncSeq(s, func(r rune) bool { return r == '/' || r == '\\' }) {
		if name == ".." {
			return true
		}
	}
	return false
}

// hidden reports a name a wildcard never matches.
func hidden(name string) bool { return strings.HasPrefix(name, ".") || strings.HasPrefix(name, "~") }

func matchPath(pattern, value string) bool {
	if value == "" || checkPathPattern(pattern) != nil || hasDotDot(value) {
		return false
	}
	ps := strings.Split(path.Clean(pattern), "/")
	vs := strings.Split(path.Clean(value), "/")
	// ok[j]: the pattern names read so far match vs[:j].
	ok := make([]bool, len(vs)+1)
	next := make([]bool, len(vs)+1)
	ok[0] = true
	for _, p := range ps {
		next[0] = p == "**" && ok[0]
		for j := 1; j <= len(vs); j++ {
			if p == "**" {
				next[j] = ok[j] || (next[j-1] && vs[j-1] != "" && !hidden(vs[j-1]))
			} else {
				next[j] = ok[j-1] && matchName(p, vs[j-1])
			}
		}
		ok, next = next, ok
	}
	return ok[len(vs)]
}

// matchName matches one name of a path; the empty name (before an absolute
// path's first `/`) matches only itself.
func matchName(p, v string) bool {
	if v == "" || p == "" {
		return p == v
	}
	if p[0] == '*' && hidden(v) {
		return false
	}
	vr := []rune(v)
	return glob([]rune(p), vr, func(i int) bool { return vr[i] != '\\' })
}

// checkPathPattern refuses a path pattern that could reach out of what it names.
func checkPathPattern(pattern string) error {
	if hasDotDot(pattern) {
		return errors.New("a path pattern cannot hold a .. name: name the directory itself")
	}
	for name := range strings.SplitSeq(pattern, "/") {
		if strings.Contains(name, "**") && name != "**" {
			return errors.New("** stands alone between slashes (src/**/test.go), or write * for one name")
		}
	}
	return nil
}
