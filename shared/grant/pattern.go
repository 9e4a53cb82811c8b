package grant

import "strings"

// The pattern syntax of a grant, kept small so that it holds no surprises:
//
//   - the pattern matches the whole field value, from its first character to
//     its last (anchored at both ends);
//   - `*` matches any run of characters, empty included, except a line break
//     and the shell's control characters ; & | < > ` $ ( ) and backslash,
//     so "git push origin *" allows "git push origin main" but neither
//     "git push origin main; rm -rf ~" nor "git push origin $(curl …)";
//   - every other character, spaces and quotes included, matches itself,
//     case-sensitively. There is no escape: a pattern cannot match a literal
//     "*" by wildcard, and there are no regular expressions.
//
// A field value longer than MaxValue characters never matches.

// MaxValue is the longest field value a pattern is matched against, in characters.
const MaxValue = 20000

// notWild are the characters `*` never matches.
const notWild = "\n\r;&|<>`$()\\"

func wild(r rune) bool { return !strings.ContainsRune(notWild, r) }

// Match reports whether value matches pattern in full under the syntax above.
func Match(pattern, value string) bool {
	p, v := []rune(pattern), []rune(value)
	if len(v) > MaxValue || len(p) > MaxPattern {
		return false
	}
	// ok[j]: the pattern read so far matches v[:j]. One row per pattern rune.
	ok := make([]bool, len(v)+1)
	next := make([]bool, len(v)+1)
	ok[0] = true
	for _, pr := range p {
		if pr == '*' {
			// next[j]: ok[j], or next[j-1] and v[j-1] is a character * may take.
			next[0] = ok[0]
			for j := 1; j <= len(v); j++ {
				next[j] = ok[j] || (next[j-1] && wild(v[j-1]))
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
