// Command route is the Lambda function that routes the requested tasks that
// waited on a completed one (template.yaml's Completions rule), once per event.
package main

import (
	"context"
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
	ctx := context.Background()
	client, err := store.NewClient(ctx, os.Getenv("PRICKLE_DYNAMODB_ENDPOINT"))
	if err != nil {
		log.Error("start", "error", err.Error())
		os.Exit(1)
	}
	events, err := bus.FromEnv(ctx)
	if err != nil {
		log.Error("start", "error", err.Error())
		os.Exit(1)
	}
	st := store.New(client, store.TablesFromEnv())
	svc := team.New(st)
	svc.Events = events
	lambda.Start(bus.FromCloudWatch(bus.Once(route.Target, st, route.New(svc).Handle)))
}
