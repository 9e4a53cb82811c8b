// Command task-events is the Lambda function that reads the tasks table's
// stream and republishes the events of every stored task move, so a writer
// that crashed before publishing loses none.
package main

import (
	"context"
	"log/slog"

	"github.com/useprickle/prickle/shared/bus"
	"github.com/useprickle/prickle/shared/lambdamain"
	"github.com/useprickle/prickle/shared/store"
	"github.com/useprickle/prickle/shared/taskstream"
)

func main() {
	lambdamain.Start(func(context.Context, *slog.Logger) (any, error) {
		return taskstream.New(store.FromEnv(), bus.FromEnv()).Handle, nil
	})
}
