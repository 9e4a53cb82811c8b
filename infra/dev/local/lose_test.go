package main

import "testing"

func TestParseLoseAnswers(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int
		ok   bool
	}{{"", 0, true}, {"0", 0, true}, {"5", 5, true}, {"20", 20, true}, {"1", 0, false}, {"-3", 0, false}, {"x", 0, false}} {
		got, err := parseLoseAnswers(tt.in)
		if got != tt.want || (err == nil) != tt.ok {
			t.Errorf("parseLoseAnswers(%q) = %d, %v; want %d, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}
