package store

import "testing"

func TestRoundSize(t *testing.T) {
	cases := []struct {
		name    string
		need    int
		dropped bool
		want    int32
	}{
		{"a first round asks one more than the page", 20, false, 21},
		{"a round after unfiltered ones stays at the need", 5, false, 6},
		{"once the filter dropped items a round reads a full page", 20, true, filteredPageSize},
		{"a need above the full page is kept", 150, true, 151},
		{"a page of one", 1, false, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := *roundSize(c.need, c.dropped); got != c.want {
				t.Errorf("roundSize(%d, %v) = %d, want %d", c.need, c.dropped, got, c.want)
			}
		})
	}
}
