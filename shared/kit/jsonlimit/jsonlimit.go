// Package jsonlimit bounds free-form JSON before anything else reads it: how
// deep it nests and how many keys and array elements it holds, checked in one
// streaming pass over its bytes (no recursion, so a deep value cannot blow
// the stack, and the pass stops at the first limit crossed).
package jsonlimit

import (
	"fmt"
	"io"
)

// Kinds of limit a value can cross.
const (
	Depth    = "depth"
	Elements = "elements"
)

// Error says which limit a value crossed, and under which member of the
// top-level object ("/input"; empty when not inside one).
type Error struct {
	Kind   string
	Max    int
	Member string
}

func (e *Error) Error() string {
	where := "value"
	if e.Member != "" {
		where = "/" + e.Member
	}
	if e.Kind == Depth {
		return fmt.Sprintf("%s nests deeper than %d levels", where, e.Max)
	}
	return fmt.Sprintf("%s holds more than %d keys and array elements in all", where, e.Max)
}

// frame is one open object or array: key says an object expects a key
// next, empty that an array has no element yet.
type frame struct{ obj, key, empty bool }

// Check reads raw once, byte by byte (no allocation but the stack of open
// containers, itself bounded by maxDepth), and fails with an *Error as soon
// as it nests deeper than maxDepth (the top-level value is level 1) or holds
// more than maxElements keys and array elements in all; a limit ≤ 0 is not
// checked. It follows strings and brackets only: the JSON itself is
// validated by whoever decodes it next.
func Check(raw []byte, maxDepth, maxElements int) error {
	var stack []frame
	elements := 0
	member := ""
	count := func() error {
		elements++
		if maxElements > 0 && elements > maxElements {
			return &Error{Kind: Elements, Max: maxElements, Member: member}
		}
		return nil
	}
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			continue
		}
		n := len(stack)
		// An array's first value is one element; each comma one more.
		if n > 0 && !stack[n-1].obj && stack[n-1].empty && c != ']' {
			stack[n-1].empty = false
			if err := count(); err != nil {
				return err
			}
		}
		switch c {
		case '"':
			end := StringEnd(raw, i)
			if end == len(raw) {
				return fmt.Errorf("not JSON: %w", io.ErrUnexpectedEOF)
			}
			if n == 1 && stack[0].obj && stack[0].key {
				member = string(raw[i+1 : end])
			}
			i = end
		case '{', '[':
			stack = append(stack, frame{obj: c == '{', key: c == '{', empty: true})
			if maxDepth > 0 && len(stack) > maxDepth {
				return &Error{Kind: Depth, Max: maxDepth, Member: member}
			}
		case '}', ']':
			if n == 0 {
				return fmt.Errorf("not JSON: unexpected %q at byte %d", c, i)
			}
			stack = stack[:n-1]
		case ':':
			if n > 0 && stack[n-1].obj {
				stack[n-1].key = false
				if err := count(); err != nil {
					return err
				}
			}
		case ',':
			if n > 0 && stack[n-1].obj {
				stack[n-1].key = true
			} else if n > 0 {
				if err := count(); err != nil {
					return err
				}
			}
		}
	}
	if len(stack) > 0 {
		return fmt.Errorf("not JSON: %w", io.ErrUnexpectedEOF)
	}
	return nil
}

// StringEnd is the index of the quote that closes the JSON string whose
// opening quote is raw[open], or len(raw) when the string is not closed.
func StringEnd(raw []byte, open int) int {
	for i := open + 1; i < len(raw); i++ {
		switch raw[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return len(raw)
}
