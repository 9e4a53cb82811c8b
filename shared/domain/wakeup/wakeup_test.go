package wakeup

import "testing"

func TestHookCheck(t *testing.T) {
	ok := Hook{Agent: "bo/codex", URL: "https://agents.example.com/wake", Secret: "whsec_0123456789abcdef"}
	if err := ok.Check(); err != nil {
		t.Fatal(err)
	}
	for _, h := range []Hook{
		{Agent: "a/b", URL: "/relative", Secret: ok.Secret},
		{Agent: "a/b", URL: "mailto:x@example.com", Secret: ok.Secret},
		{Agent: "a/b", URL: ok.URL, Secret: "short"},
	} {
		if err := h.Check(); err == nil {
			t.Errorf("hook %+v accepted", h)
		}
	}
	s1, err := NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	s2, _ := NewSecret()
	if s1 == s2 || len(s1) < MinSecretLength {
		t.Errorf("NewSecret gave %q and %q", s1, s2)
	}
}
