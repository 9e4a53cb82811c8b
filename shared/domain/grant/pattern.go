package grant

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The pattern syntax of a grant, kept small so that a pattern means what an
// owner reading it thinks it means. The pattern matches the whole value of
// one field, and how depends on what the field holds (its Kind):
//
//   - a command (KindCommand, e.g. Bash's command) is compared word by word,
//     and a `*` never reaches into another word, an option or a refspec
//     deletion (command.go);
//   - a path (KindPath, e.g. Write's file_path) is cleaned, then compared name
//     by name; `*` never crosses `/` and nothing matches `..` (path.go);
//   - any other field is compared as text (KindText, below).
//
// In every kind, every character that is not `*` matches itself,
// case-sensitively: there is no escape and there are no regular
// expressions. A value longer than MaxValue characters, or holding a line
// break, a NUL or any other control character, never matches.

// Kind is how a pattern reads the value of its field.
type Kind string

// Kinds of field values.
const (
	KindCommand Kind = "command"
	KindPath    Kind = "path"
	KindText    Kind = "text"
)

// CommandFields are the input fields read as shell commands.
var CommandFields = []string{"command"}

// PathFields are the input fields read as file paths: Write, Edit and Read's
// file_path, NotebookEdit's notebook_path, Glob, Grep and LS's path.
var PathFields = []string{"file_path", "notebook_path", "path"}

// KindOf says how a pattern on field reads its value.
func KindOf(field string) Kind {
	switch {
	case slices.Contains(CommandFields, field):
		return KindCommand
	case slices.Contains(PathFields, field):
		return KindPath
	}
	return KindText
}

// MaxValue is the longest field value a pattern is matched against, in characters.
const MaxValue = 20000

// shellControl are the characters `*` never matches, in any kind but paths:
// the shell's separators, redirections, substitutions and its escape.
const shellControl = ";&|<>`$()\\"

// Match reports whether value, the value of field, matches pattern in full
// under the syntax of the field's kind.
func Match(field, pattern, value string) bool {
	if utf8.RuneCountInString(value) > MaxValue || utf8.RuneCountInString(pattern) > MaxPattern ||
		hasControl(value) || hasControl(pattern) {
		return false
	}
	switch KindOf(field) {
	case KindCommand:
		return matchCommand(pattern, value)
	case KindPath:
		return matchPath(pattern, value)
	}
	v := []rune(value)
	return glob([]rune(pattern), v, func(i int) bool {
		return !strings.ContainsRune(shellControl, v[i]) && !inDotDot(v, i)
	})
}

// hasControl reports a line break, NUL or other control character, including
// Unicode's line and paragraph separators.
func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return unicode.IsControl(r) || r == '\u2028' || r == '\u2029' })
}

// inDotDot reports whether v[i] is one of two dots in a row: `*` never matches part of a `..`.
func inDotDot(v []rune, i int) bool {
	return v[i] == '.' && (i > 0 && v[i-1] == '.' || i+1 < len(v) && v[i+1] == '.')
}

// glob reports whether v matches p in full, where each `*` of p matches any
// run of v's runes (empty included) at positions may allows, and every other
// rune of p matches itself.
func glob(p, v []rune, may func(i int) bool) bool {
	// ok[j]: the pattern read so far matches v[:j]. One row per pattern rune.
	ok := make([]bool, len(v)+1)
	next := make([]bool, len(v)+1)
	ok[0] = true
	for _, pr := range p {
		if pr == '*' {
			next[0] = ok[0]
			for j := 1; j <= len(v); j++ {
				next[j] = ok[j] || (next[j-1] && may(j-1))
			}
		} else {
			next[0] = false
			for j := 1; j <= len(v); j++ {
				next[j] = ok[j-1] && v[j-1] == pr
			}
		}
		ok, next = next, ok
	}
	return ok[len(v)]
}
