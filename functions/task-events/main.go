// Command task-events is the Lambda function that reads the tasks table's
// stream and republishes the events of every stored task move, so a writer
// that crashed before publishing loses none.
package main

import (
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/useprickle/prickle/shared/bus"
	"github.com/useprickle/prickle/shared/store"
	"github.com/useprickle/prickle/shared/taskstream"
)

func main() {
	slog.SetDefault(slog.New(slog.NewJSONHandler(os.Stdout, nil)))
	client := store.NewFunctionClient(os.Getenv("PRICKLE_DYNAMODB_ENDPOINT"))
	st := store.New(client, store.TablesFromEnv())
	lambda.Start(taskstream.New(st, bus.FromEnv()).Handle)
}
