// Package jsonlimit bounds free-form JSON before anything else reads it: how
// deep it nests and how many keys and array elements it holds, checked in one
// streaming pass over its tokens (no recursion, so a deep value cannot blow
// the stack, and the pass stops at the first limit crossed).
package jsonlimit

import (
	"bytes"
	"encoding/json"
	"errors"
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

// frame is one open object or array; key says an object expects a key next.
type frame struct{ obj, key bool }

// Check reads raw once and fails with an *Error as soon as it nests deeper
// than maxDepth (the top-level value is level 1) or holds more than
// maxElements keys and array elements in all; a limit ≤ 0 is not checked.
func Check(raw []byte, maxDepth, maxElements int) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
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
	// done marks the end of a value: its object now expects a key.
	done := func() {
		if n := len(stack); n > 0 && stack[n-1].obj {
			stack[n-1].key = true
		}
	}
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) && len(stack) == 0 {
			return nil
		}
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("not JSON: %w", io.ErrUnexpectedEOF)
		}
		if err != nil {
			return fmt.Errorf("not JSON: %w", err)
		}
		n := len(stack)
		if n > 0 && stack[n-1].obj && stack[n-1].key {
			if tok == json.Delim('}') {
				stack = stack[:n-1]
				done()
				continue
			}
			stack[n-1].key = false
			if k, ok := tok.(string); ok && n == 1 {
				member = k
			}
			if err := count(); err != nil {
				return err
			}
			continue
		}
		inArray := n > 0 && !stack[n-1].obj
		switch tok {
		case json.Delim('{'), json.Delim('['):
			if inArray {
				if err := count(); err != nil {
					return err
				}
			}
			stack = append(stack, frame{obj: tok == json.Delim('{'), key: tok == json.Delim('{')})
			if maxDepth > 0 && len(stack) > maxDepth {
				return &Error{Kind: Depth, Max: maxDepth, Member: member}
			}
		case json.Delim(']'):
			stack = stack[:n-1]
			done()
		default:
			if inArray {
				if err := count(); err != nil {
					return err
				}
			}
			done()
		}
	}
}
