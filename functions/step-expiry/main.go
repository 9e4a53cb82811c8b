// Command step-expiry is the Lambda function that reads TTL removals from
// the steps table's stream and settles expired steps, publishing Step Expired.
package main

import (
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/useprickle/prickle/shared/bus"
	"github.com/useprickle/prickle/shared/expiry"
	"github.com/useprickle/prickle/shared/store"
	"github.com/useprickle/prickle/shared/team"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	slog.SetDefault(log)
	client := store.NewFunctionClient(os.Getenv("PRICKLE_DYNAMODB_ENDPOINT"))
	events := bus.FromEnv()
	svc := team.New(store.New(client, store.TablesFromEnv()))
	svc.Events = events
	lambda.Start(expiry.New(svc, events).Handle)
}
