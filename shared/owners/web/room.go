// The helpers the room pages (pulse.go, board.go, taskpage.go) share.

package web

import (
	"fmt"
	"strings"
	"time"
)

// ago says how long before now t was, the way a person reads it.
func ago(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h ago", int(d/time.Hour))
	}
	return fmt.Sprintf("%d days ago", int(d/(24*time.Hour)))
}

func ownerOf(agent string) string {
	o, _, _ := strings.Cut(agent, "/")
	return o
}
