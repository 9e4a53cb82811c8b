package grant

import (
	"errors"
	"strings"
)

// A command pattern and the command are read as shell words: spaces outside
// quotes separate words, and 'a b' or "a b" is one word. The command must
// have as many words as the pattern, and each pattern word matches the word
// in its place:
//
//   - a `*` matches a run of characters of that one word, never a character
//     of shellControl (quoted or not), outside quotes never a glob, brace,
//     tilde, history or comment character (`* ? [ ] { } ~ ! #`), and never
//     part of a `..`;
//   - a command word that starts with `-`, `:` or `+` (an option, a refspec
//     deletion, a forced refspec; quoted or not) matches only a pattern word
//     that starts with that same character, written by the owner: `*` alone
//     never matches `--delete`, `:main` or `+main`.
//
// A pattern holds no backslash and no `*` inside quotes (CheckPattern), so a
// command with a backslash never matches, and how a shell reads a backslash
// never matters.

// optionStarts are the first characters of a word `*` never matches by itself.
const optionStarts = "-:+"

// unquotedSpecial are the characters `*` matches only inside quotes.
const unquotedSpecial = "*?[]{}~!#"

// word is one shell word of a command or pattern.
type word struct {
	raw []rune
	// quoted says, per rune of raw, whether it is a quote mark or inside quotes.
	quoted []bool
	// text is the word as the program receives it: quote marks removed.
	text string
}

// words splits s into shell words; ok is false when a quote is left open.
func words(s string) (out []word, ok bool) {
	var cur *word
	var text strings.Builder
	var quote rune
	for _, r := range s {
		if quote == 0 && r == ' ' {
			if cur != nil {
				cur.text = text.String()
				out = append(out, *cur)
				cur = nil
				text.Reset()
			}
			continue
		}
		if cur == nil {
			cur = &word{}
		}
		quoted := quote != 0
		switch {
		case quote == 0 && (r == '\'' || r == '"'):
			quote, quoted = r, true
		case quote != 0 && r == quote:
			quote = 0
		default:
			text.WriteRune(r)
		}
		cur.raw = append(cur.raw, r)
		cur.quoted = append(cur.quoted, quoted)
	}
	if quote != 0 {
		return nil, false
	}
	if cur != nil {
		cur.text = text.String()
		out = append(out, *cur)
	}
	return out, true
}

func matchCommand(pattern, value string) bool {
	if checkCommandPattern(pattern) != nil {
		return false
	}
	pw, _ := words(pattern)
	vw, ok := words(value)
	if !ok || len(vw) != len(pw) {
		return false
	}
	for i := range pw {
		if !matchWord(pw[i], vw[i]) {
			return false
		}
	}
	return true
}

func matchWord(p, v word) bool {
	if v.text != "" && strings.ContainsRune(optionStarts, rune(v.text[0])) && (p.text == "" || p.text[0] != v.text[0]) {
		return false
	}
	return glob(p.raw, v.raw, func(i int) bool {
		r := v.raw[i]
		return !strings.ContainsRune(shellControl, r) && (v.quoted[i] || !strings.ContainsRune(unquotedSpecial, r)) && !inDotDot(v.raw, i)
	})
}

// checkCommandPattern refuses a command pattern whose words a shell could read otherwise.
func checkCommandPattern(pattern string) error {
	if strings.ContainsRune(pattern, '\\') {
		return errors.New("a command pattern cannot hold a backslash")
	}
	pw, ok := words(pattern)
	if !ok {
		return errors.New("a quote is left open in the pattern")
	}
	for _, w := range pw {
		for i, r := range w.raw {
			if r == '*' && w.quoted[i] {
				return errors.New("a * inside quotes is not allowed: write * alone, it matches a quoted word too")
			}
		}
	}
	return nil
}
