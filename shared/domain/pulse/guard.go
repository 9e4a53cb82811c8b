package pulse

import "fmt"

// File guards: what a runner does with an edit of a file another agent of
// the project holds in its live Team Pulse entry (a project setting).
const (
	// GuardDeny stops the edit before it happens and tells the agent who holds the file.
	GuardDeny = "deny"
	// GuardAsk asks the editing agent's owner (request_step), who may allow it once.
	GuardAsk = "ask"
	// GuardWarn lets the edit go ahead and tells the agent who holds the file.
	GuardWarn = "warn"
)

// Guards are the file guards a project may set; DefaultGuard is the one it
// has unless it sets another.
var Guards = []string{GuardDeny, GuardAsk, GuardWarn}

// DefaultGuard is a project's file guard unless it sets another.
const DefaultGuard = GuardDeny

// Guard is a project's file guard: g, or DefaultGuard when g is empty; an
// unknown guard is an error.
func Guard(g string) (string, error) {
	switch g {
	case "":
		return DefaultGuard, nil
	case GuardDeny, GuardAsk, GuardWarn:
		return g, nil
	}
	return "", fmt.Errorf("file guard %q must be one of %v", g, Guards)
}
