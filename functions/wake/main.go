// Command wake is the Lambda function that wakes agents' runs on Task
// Routed, Result Returned, Step Decided and Result Decided (template.yaml's
// Wakeups rule), once per event, through their registered webhooks.
package main

import (
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/useprickle/prickle/shared/admin"
	"github.com/useprickle/prickle/shared/bus"
	"github.com/useprickle/prickle/shared/store"
	"github.com/useprickle/prickle/shared/wake"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	slog.SetDefault(log)
	client := store.NewFunctionClient(os.Getenv("PRICKLE_DYNAMODB_ENDPOINT"))
	st := store.New(client, store.TablesFromEnv())
	waker := wake.NewWaker(st, admin.New(st))
	waker.Log = log
	lambda.Start(bus.FromCloudWatch(bus.Once(wake.Target, st, waker.Handle)))
}
