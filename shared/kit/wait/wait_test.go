package wait

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestFor(t *testing.T) {
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		d    time.Duration
		want error
	}{
		{"the wait ends", context.Background(), time.Millisecond, nil},
		{"the context ends first", ended, time.Hour, context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := For(tc.ctx, tc.d); !errors.Is(err, tc.want) {
				t.Fatalf("For = %v, want %v", err, tc.want)
			}
		})
	}
}
