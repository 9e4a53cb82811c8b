// Command web is the Lambda function behind the people's pages: approval
// links (GET shows, POST decides), sign-in, Team Pulse, the board, task pages
// and the tool reference; decisions go out on the EventBridge bus.
package main

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/useprickle/prickle/shared/aws/bus"
	"github.com/useprickle/prickle/shared/aws/lambdahttp"
	"github.com/useprickle/prickle/shared/aws/settings"
	"github.com/useprickle/prickle/shared/aws/store"
	"github.com/useprickle/prickle/shared/owners/web"
	"github.com/useprickle/prickle/shared/team"
)

func main() { lambdahttp.Run(build) }

// Alike the other functions' build on purpose: each function is its own composition root and links only what it serves.
func build(ctx context.Context, log *slog.Logger) (http.Handler, error) {
	signer, err := settings.Signer(ctx, settings.OS, &settings.LazySSM{})
	if err != nil {
		return nil, err
	}
	st := store.FromEnv()
	svc := team.New(st)
	svc.Events = bus.FromEnv()
	return web.New(web.Config{Service: svc, Spend: team.NewModelSpend(st, svc.Events, log), Store: st, Signer: signer, BaseURL: settings.PublicBaseURL(settings.OS), ImageHosts: settings.ImageHosts(settings.OS), Log: log}), nil
}
