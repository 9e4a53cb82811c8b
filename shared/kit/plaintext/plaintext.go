// Package plaintext is the one rule for names a person reads as they are
// written (a file on Team Pulse, a branch, an OAuth client's name): no
// character that can hide or reorder what is shown. Control characters
// (C0 with NUL, tab and line breaks, DEL, C1), the line and paragraph
// separators, and the bidirectional format characters (U+061C, U+200E,
// U+200F, U+202A–U+202E, U+2066–U+2069: a right-to-left override makes
// src/<U+202E>gnp.exe read as src/exe.png) are what it refuses or strips. Letters
// of every script pass.
package plaintext

import (
	"fmt"
	"strings"
	"unicode"
)

// Spoofs reports whether r is a character names must not hold.
func Spoofs(r rune) bool {
	return unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Bidi_Control, r)
}

// Strip is s without the characters Spoofs names.
func Strip(s string) string {
	return strings.Map(func(r rune) rune {
		if Spoofs(r) {
			return -1
		}
		return r
	}, s)
}

// Check says which character of s, if any, a name must not hold: "" when
// none, else e.g. "U+202E (a bidirectional format character)".
func Check(s string) string {
	i := strings.IndexFunc(s, Spoofs)
	if i < 0 {
		return ""
	}
	r := []rune(s[i:])[0]
	kind := "a control character"
	switch {
	case r == '\n' || r == '\r' || r == '\u0085' || r == '\u2028' || r == '\u2029':
		kind = "a line break"
	case unicode.Is(unicode.Bidi_Control, r):
		kind = "a bidirectional format character"
	}
	return fmt.Sprintf("U+%04X (%s)", r, kind)
}
