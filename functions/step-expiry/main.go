// Command step-expiry is the Lambda function that reads TTL removals from
// the steps table's stream and settles expired steps, publishing Step Expired.
package main

import (
	"context"
	"log/slog"

	"github.com/useprickle/prickle/shared/aws/bus"
	"github.com/useprickle/prickle/shared/aws/lambdamain"
	"github.com/useprickle/prickle/shared/aws/store"
	"github.com/useprickle/prickle/shared/jobs/stepexpiry"
	"github.com/useprickle/prickle/shared/team"
)

// Alike the other event functions' main on purpose: each function is its own composition root and links only what it serves.
func main() {
	lambdamain.Start(func(context.Context, *slog.Logger) (any, error) {
		events := bus.FromEnv()
		svc := team.New(store.FromEnv())
		svc.Events = events
		return stepexpiry.New(svc, events).Handle, nil
	})
}
