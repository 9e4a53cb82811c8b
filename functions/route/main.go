// Command route is the Lambda function that routes the requested tasks that
// waited on a completed one (template.yaml's Completions rule), once per event.
package main

import (
	"context"
	"log/slog"

	"github.com/useprickle/prickle/shared/aws/bus"
	"github.com/useprickle/prickle/shared/aws/lambdamain"
	"github.com/useprickle/prickle/shared/aws/store"
	"github.com/useprickle/prickle/shared/jobs/route"
	"github.com/useprickle/prickle/shared/team"
)

// Alike the other event functions' main on purpose: each function is its own composition root and links only what it serves.
func main() {
	lambdamain.Start(func(context.Context, *slog.Logger) (any, error) {
		st := store.FromEnv()
		svc := team.New(st)
		svc.Events = bus.FromEnv()
		return bus.FromCloudWatch(bus.Once(route.Target, st, route.New(svc).Handle)), nil
	})
}
