// Command task-events is the Lambda function that reads the tasks table's
// stream and republishes the events of every stored task move, so a writer
// that crashed before publishing loses none.
package main

import (
	"context"
	"log/slog"

	"github.com/useprickle/prickle/shared/aws/bus"
	"github.com/useprickle/prickle/shared/aws/lambdamain"
	"github.com/useprickle/prickle/shared/aws/store"
	"github.com/useprickle/prickle/shared/jobs/taskevents"
)

func main() {
	lambdamain.Start(func(context.Context, *slog.Logger) (any, error) {
		return taskevents.New(store.FromEnv(), bus.FromEnv()).Handle, nil
	})
}
