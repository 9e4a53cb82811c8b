// Package lambdamain is the start every function's main shares: the JSON
// logger every function logs with, and the build-then-serve of a handler
// made from the environment. It imports nothing of Prickle, so a function
// links only what its own handler needs.
package lambdamain

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
)

// Logger is the JSON logger on stdout (CloudWatch Logs) every function logs
// with, also made the default so packages logging through slog agree.
func Logger() *slog.Logger {
	log := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	slog.SetDefault(log)
	return log
}

// Start is a function's main: the logger, then the handler build makes
// from the environment, served by lambda.Start; a build error is logged
// and exits 1, so a misconfigured function fails its first invocation
// loudly. It never returns.
func Start(build func(ctx context.Context, log *slog.Logger) (any, error)) {
	log := Logger()
	h, err := build(context.Background(), log)
	if err != nil {
		log.Error("start", "error", err.Error())
		os.Exit(1)
	}
	lambda.Start(h)
}
