// Command runner is the Lambda function behind pull mode: runners on
// machines no webhook reaches claim their agent's wake-ups (POST
// /runner/claim, a long poll that mints each run token), keep them while
// their runs go (POST /runner/extend) and acknowledge them (POST
// /runner/ack); a runner ends a run's token when the run is over (POST
// /runner/ended, with the run's model usage); a runner woken by webhook asks
// whether a run may start under its agent's model-spend cap (POST
// /runner/start); a run's hook reads its project's file-claim settings
// (POST /runner/project). Asks of an owner whose agent reached its cap go
// out on the EventBridge bus.
package main

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/useprickle/prickle/shared/aws/bus"
	"github.com/useprickle/prickle/shared/aws/lambdahttp"
	"github.com/useprickle/prickle/shared/aws/settings"
	"github.com/useprickle/prickle/shared/aws/store"
	"github.com/useprickle/prickle/shared/jobs/runnerapi"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/admin"
)

func main() { lambdahttp.Run(build) }

// Alike the other functions' build on purpose: each function is its own composition root and links only what it serves.
func build(_ context.Context, log *slog.Logger) (http.Handler, error) {
	visibility, err := settings.WakeVisibility(settings.OS)
	if err != nil {
		return nil, err
	}
	st := store.FromEnv()
	return runnerapi.New(runnerapi.Config{Tokens: st, Queue: st, Runs: admin.New(st), Spend: team.NewModelSpend(st, bus.FromEnv(), log), Settings: team.New(st), Log: log, Visibility: visibility}), nil
}
