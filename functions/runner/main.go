// Command runner is the Lambda function behind pull mode: runners on
// machines no webhook reaches claim their agent's wake-ups (POST
// /runner/claim, a long poll that mints each run token) and acknowledge them
// (POST /runner/ack).
package main

import (
	"log/slog"
	"os"

	"github.com/useprickle/prickle/shared/admin"
	"github.com/useprickle/prickle/shared/config"
	"github.com/useprickle/prickle/shared/lambdahttp"
	"github.com/useprickle/prickle/shared/pull"
	"github.com/useprickle/prickle/shared/store"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	slog.SetDefault(log)
	visibility, err := config.WakeVisibility(config.OS)
	if err != nil {
		log.Error("start", "error", err.Error())
		os.Exit(1)
	}
	st := store.New(store.NewFunctionClient(os.Getenv("PRICKLE_DYNAMODB_ENDPOINT")), store.TablesFromEnv())
	lambdahttp.Start(pull.New(pull.Config{Tokens: st, Queue: st, Runs: admin.New(st), Log: log, Visibility: visibility}))
}
