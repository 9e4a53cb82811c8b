package jsonlimit

import (
	"errors"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	for _, tc := range []struct {
		name            string
		raw             string
		depth, elements int
		kind, member    string
	}{
		{"scalar", `1`, 1, 0, "", ""},
		{"empty object is level 1", `{}`, 1, 0, "", ""},
		{"depth at limit", deep(5), 5, 0, "", ""},
		{"depth over limit", deep(6), 5, 0, Depth, ""},
		{"depth names the member", `{"x":1,"input":{"a":[[]]}}`, 3, 0, Depth, "input"},
		{"depth under member at limit", `{"input":{"a":[]}}`, 3, 0, "", ""},
		{"elements at limit", `{"a":[1,2],"b":{"c":null}}`, 0, 5, "", ""},
		{"elements over limit", `{"a":[1,2,3],"b":{"c":null}}`, 0, 5, Elements, "b"},
		{"keys count", `{"a":1,"b":2,"c":3}`, 0, 2, Elements, "c"},
		{"nested arrays count as elements", `[[[]]]`, 0, 2, "", ""},
		{"empty containers", `{"a":{},"b":[]}`, 2, 2, "", ""},
		{"no limits", deep(1000), 0, 0, "", ""},
		{"brackets, colons and commas in strings", `{"a":"[[{:,\\\"]]"}`, 1, 1, "", ""},
		{"escaped key names the member", `{"x\"y":[[]]}`, 2, 0, Depth, `x\"y`},
	} {
		err := Check([]byte(tc.raw), tc.depth, tc.elements)
		var le *Error
		if tc.kind == "" {
			if err != nil {
				t.Errorf("%s: %v, want nil", tc.name, err)
			}
			continue
		}
		if !errors.As(err, &le) || le.Kind != tc.kind || le.Member != tc.member {
			t.Errorf("%s: %v (%+v), want %s limit under %q", tc.name, err, le, tc.kind, tc.member)
		}
	}
	for _, bad := range []string{`{"a":`, `{"a":"`, `]`} {
		if err := Check([]byte(bad), 0, 0); err == nil || errors.As(err, new(*Error)) {
			t.Errorf("%s: %v, want a syntax error", bad, err)
		}
	}
}

func TestStringEnd(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		open int
		want int
	}{
		{`"abc"`, 0, 4},
		{`{"a\"b":1}`, 1, 6},
		{`"a\\"`, 0, 4},
		{`"unclosed`, 0, 9},
		{`"ends in escape\`, 0, 16},
		{`["x","y"]`, 5, 7},
	} {
		if got := StringEnd([]byte(tc.raw), tc.open); got != tc.want {
			t.Errorf("StringEnd(%s, %d) = %d, want %d", tc.raw, tc.open, got, tc.want)
		}
	}
}
