package web

import (
	"strings"

	"github.com/useprickle/prickle/shared/domain/grant"
)

// syntaxView is a pattern syntax as the grant form shows it.
type syntaxView struct {
	Rule            []span
	Example         string
	Allows, Refuses []string
}

func viewSyntax(s grant.Syntax) syntaxView {
	return syntaxView{Rule: codeSpans(s.Rule), Example: s.Example, Allows: s.Allows, Refuses: s.Refuses}
}

// span is a run of text, code or not.
type span struct {
	Text string
	Code bool
}

// codeSpans splits text whose code is between backticks, as in Markdown:
// a span between two backticks on each side holds code with a backtick in it.
func codeSpans(s string) []span {
	var out []span
	for s != "" {
		i := strings.IndexByte(s, '`')
		if i < 0 {
			return append(out, span{Text: s})
		}
		if i > 0 {
			out = append(out, span{Text: s[:i]})
		}
		fence := "`"
		if strings.HasPrefix(s[i:], "``") {
			fence = "``"
		}
		rest := s[i+len(fence):]
		j := strings.Index(rest, fence)
		if j < 0 {
			return append(out, span{Text: s[i:]})
		}
		out = append(out, span{Text: strings.TrimSpace(rest[:j]), Code: true})
		s = rest[j+len(fence):]
	}
	return out
}
