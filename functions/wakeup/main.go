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
	wakeupjob "github.com/useprickle/prickle/shared/jobs/wakeup"
	"github.com/useprickle/prickle/shared/team/admin"
)

func main() {
	lambdamain.Start(func(_ context.Context, log *slog.Logger) (any, error) {
		st := store.FromEnv()
		waker := wakeupjob.NewWaker(st, admin.New(st))
		waker.Log = log
		return bus.FromCloudWatch(bus.Once(wakeupjob.Target, st, waker.Handle)), nil
	})
}
