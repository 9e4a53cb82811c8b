package notify

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/useprickle/prickle/shared/kit/jsonlimit"
)

// How much of a step's input each rendering shows at most (bytes of the
// indented JSON, before the clip note). A page shows every input
// request_step accepts in full; mail and Slack show the start and link to it.
const (
	InputPageMax  = 256 << 10
	InputEmailMax = 16 << 10
	inputSlackMax = 2400
)

// maxIndentLevels caps the indentation, so the rendering stays linear in
// the input's size however deep it nests (full indentation grows with the
// square of the depth).
const maxIndentLevels = 16

// PrettyInput indents a step's input JSON for people, keeping its bytes
// otherwise (no HTML escaping), in one pass that stops after max bytes; a
// clipped rendering ends with a line saying so and how big the whole input is.
func PrettyInput(input json.RawMessage, max int) string {
	var b strings.Builder
	depth := 0
	newline := func() {
		b.WriteByte('\n')
		b.WriteString(strings.Repeat("  ", min(depth, maxIndentLevels)))
	}
	for i := 0; i < len(input); i++ {
		if b.Len() >= max {
			return clipNote(b.String()[:max], len(input))
		}
		c := input[i]
		switch c {
		case ' ', '\t', '\n', '\r':
		case '"':
			end := min(jsonlimit.StringEnd(input, i)+1, len(input))
			b.Write(input[i:end])
			i = end - 1
		case '{', '[':
			b.WriteByte(c)
			if j := nextSignificant(input, i+1); j < len(input) && (input[j] == '}' || input[j] == ']') {
				b.WriteByte(input[j])
				i = j
				continue
			}
			depth++
			newline()
		case '}', ']':
			depth--
			newline()
			b.WriteByte(c)
		case ',':
			b.WriteByte(c)
			newline()
		case ':':
			b.WriteString(": ")
		default:
			b.WriteByte(c)
		}
	}
	if b.Len() > max {
		return clipNote(b.String()[:max], len(input))
	}
	return b.String()
}

func nextSignificant(s []byte, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// clipNote ends a clipped rendering on a whole character and says what was left out.
func clipNote(shown string, whole int) string {
	for range utf8.UTFMax - 1 {
		if r, size := utf8.DecodeLastRuneInString(shown); r != utf8.RuneError || size != 1 {
			break
		}
		shown = shown[:len(shown)-1]
	}
	return fmt.Sprintf("%s\n… clipped: the first %d bytes are shown; the whole input is %d bytes of JSON", shown, len(shown), whole)
}
