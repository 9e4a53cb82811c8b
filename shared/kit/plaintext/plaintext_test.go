package plaintext

import "testing"

func TestSpoofs(t *testing.T) {
	for _, r := range []rune{0, '\t', '\n', '\r', 0x1b, 0x7f, 0x80, 0x85, 0x9f, 0x2028, 0x2029,
		0x061c, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069} {
		if !Spoofs(r) {
			t.Errorf("U+%04X passes", r)
		}
	}
	for _, r := range []rune{' ', 'a', '/', '[', '*', 'é', 'ل', 'ק', '日', 0xa0} {
		if Spoofs(r) {
			t.Errorf("U+%04X is refused", r)
		}
	}
	if got := Strip("src/\u202egnp.exe\x00\n"); got != "src/gnp.exe" {
		t.Errorf("Strip = %q", got)
	}
	for s, want := range map[string]string{
		"src/a.ts":          "",
		"src/\u202egnp.exe": "U+202E (a bidirectional format character)",
		"a\x00b":            "U+0000 (a control character)",
		"a\nb":              "U+000A (a line break)",
		"a\u2029b":          "U+2029 (a line break)",
		"ملف":               "",
	} {
		if got := Check(s); got != want {
			t.Errorf("Check(%q) = %q, want %q", s, got, want)
		}
	}
}
