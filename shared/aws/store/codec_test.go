package store

import (
	"testing"
	"time"
)

func TestSortableParsedReadsBackSortableTime(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want time.Time
	}{
		{"milliseconds", sortableTime(time.Date(2026, 12, 7, 19, 1, 2, 345e6, time.UTC)), time.Date(2026, 12, 7, 19, 1, 2, 345e6, time.UTC)},
		{"another zone is stored as UTC", sortableTime(time.Date(2026, 12, 7, 20, 0, 0, 0, time.FixedZone("CET", 3600))), time.Date(2026, 12, 7, 19, 0, 0, 0, time.UTC)},
		{"malformed", "2026-12-07", time.Time{}},
		{"empty", "", time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sortableParsed(tt.in); !got.Equal(tt.want) {
				t.Errorf("sortableParsed(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}
