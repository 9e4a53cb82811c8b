package mint

import (
	"fmt"

	"github.com/useprickle/prickle/shared/domain/audit"
	"github.com/useprickle/prickle/shared/domain/task"
)

// Minter is who mints a token, as the audit trail records it: the actor,
// how (the entry's via) and, when set, what for (the end of its detail).
type Minter struct{ Actor, Via, For string }

// ByOperator is an operator running the admin CLI (or a tool doing its work).
var ByOperator = Minter{Actor: "operator", Via: audit.ViaAdmin}

// ByWebhook is the wakeup function, minting the run of a wake-up it delivers
// to the agent's webhook for an event.
func ByWebhook(eventID, reason string) Minter {
	return Minter{Actor: task.System, Via: audit.ViaWebhook, For: fmt.Sprintf("woken by event %s for %s", eventID, reason)}
}

// ByClaim is Prickle minting the run of a pull wake-up as a runner of the
// agent claims it.
func ByClaim(wakeupID, agent, reason string) Minter {
	return Minter{Actor: task.System, Via: audit.ViaWakeup(wakeupID), For: fmt.Sprintf("claimed by a runner of %s for %s", agent, reason)}
}

// ByRunnerLogin is an owner joining a runner to their agent by signing in
// (prickle-runner login, the device grant): the runner's name and id say
// which machine holds the token.
func ByRunnerLogin(owner, runnerID, name string) Minter {
	return Minter{Actor: owner, Via: audit.ViaRunnerLogin, For: fmt.Sprintf("runner %s (%q) joined by its owner's sign-in", runnerID, name)}
}
