// Command slack is the Lambda function behind POST /slack/interactivity:
// the Approve and Refuse buttons of owners' Slack messages (and the Raise /
// Leave buttons of a model-spend cap reached). It verifies
// Slack's signed requests, decides as the owner (only the owner's own Slack
// user may), opens the Refuse modal with the bot token, and answers other
// people ephemerally; decisions go out on the EventBridge bus, and notify
// then edits the message in place.
package main

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/useprickle/prickle/shared/aws/bus"
	"github.com/useprickle/prickle/shared/aws/lambdahttp"
	"github.com/useprickle/prickle/shared/aws/settings"
	"github.com/useprickle/prickle/shared/aws/slackapi"
	"github.com/useprickle/prickle/shared/aws/store"
	"github.com/useprickle/prickle/shared/owners/slack"
	"github.com/useprickle/prickle/shared/team"
)

func main() { lambdahttp.Run(build) }

// Alike the other functions' build on purpose: each function is its own composition root and links only what it serves.
func build(ctx context.Context, log *slog.Logger) (http.Handler, error) {
	params := &settings.LazySSM{}
	secret, err := settings.SlackSigningSecret(ctx, settings.OS, params)
	if err != nil {
		return nil, err
	}
	if secret == "" {
		log.Info("no Slack signing secret: /slack/interactivity answers 404")
		return slack.New(slack.Config{Log: log}), nil
	}
	signer, err := settings.Signer(ctx, settings.OS, params)
	if err != nil {
		return nil, err
	}
	token, err := settings.SlackBotToken(ctx, settings.OS, params)
	if err != nil {
		return nil, err
	}
	if token == "" {
		log.Warn("no Slack bot token: Approve works, the Refuse and Edit modals cannot open")
	}
	// Slack waits 3 seconds for the answer; views.open and response_url calls must fit in it.
	api := &slackapi.Client{Token: token, BaseURL: slackapi.DefaultBaseURL, HTTP: &http.Client{Timeout: 2 * time.Second}}
	st := store.FromEnv()
	svc := team.New(st)
	svc.Events = bus.FromEnv()
	return slack.New(slack.Config{
		Secret: []byte(secret), Replays: st, Signer: signer, Owners: st, Steps: st, Decider: svc, Caps: team.NewModelSpend(st, svc.Events, log), Slack: api, Log: log,
	}), nil
}
