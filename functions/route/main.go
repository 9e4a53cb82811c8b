// Command route is the Lambda function that routes the requested tasks that
// waited on a completed one (template.yaml's Completions rule), once per event.
package main

import (
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/useprickle/prickle/shared/bus"
	"github.com/useprickle/prickle/shared/route"
	"github.com/useprickle/prickle/shared/store"
	"github.com/useprickle/prickle/shared/team"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	slog.SetDefault(log)
	client := store.NewFunctionClient(os.Getenv("PRICKLE_DYNAMODB_ENDPOINT"))
	events := bus.FromEnv()
	st := store.New(client, store.TablesFromEnv())
	svc := team.New(st)
	svc.Events = events
	lambda.Start(bus.FromCloudWatch(bus.Once(route.Target, st, route.New(svc).Handle)))
}
