// Command wake is the Lambda function that wakes agents' runs on Task
// Routed, Result Returned, Step Decided and Result Decided (template.yaml's
// Wakeups rule), once per event, through their registered webhooks.
package main

import (
	"context"
	"log/slog"

	"github.com/useprickle/prickle/shared/aws/bus"
	"github.com/useprickle/prickle/shared/aws/lambdamain"
	"github.com/useprickle/prickle/shared/aws/store"
	"github.com/useprickle/prickle/shared/jobs/wake"
	"github.com/useprickle/prickle/shared/team/admin"
)

func main() {
	lambdamain.Start(func(_ context.Context, log *slog.Logger) (any, error) {
		st := store.FromEnv()
		waker := wake.NewWaker(st, admin.New(st))
		waker.Log = log
		return bus.FromCloudWatch(bus.Once(wake.Target, st, waker.Handle)), nil
	})
}
