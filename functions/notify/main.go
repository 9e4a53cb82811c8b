// Command notify is the Lambda function that tells owners what their agents
// ask (Step Requested, Approval Requested) and what became of it (Step
// Decided, Step Expired, Result Decided): email through SES, Slack through
// the Web API, each sent once per event.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/useprickle/prickle/shared/bus"
	"github.com/useprickle/prickle/shared/config"
	"github.com/useprickle/prickle/shared/notify"
	"github.com/useprickle/prickle/shared/store"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	slog.SetDefault(log)
	n, err := build(context.Background(), log)
	if err != nil {
		log.Error("start", "error", err.Error())
		os.Exit(1)
	}
	lambda.Start(bus.FromCloudWatch(n.Handle))
}

func build(ctx context.Context, log *slog.Logger) (*notify.Notifier, error) {
	client, err := store.NewClient(ctx, os.Getenv("PRICKLE_DYNAMODB_ENDPOINT"))
	if err != nil {
		return nil, err
	}
	st := store.New(client, store.TablesFromEnv())
	params := &config.LazySSM{}
	signer, err := config.Signer(ctx, config.OS, params)
	if err != nil {
		return nil, err
	}
	n := &notify.Notifier{Owners: st, Ledger: st, Signer: signer, BaseURL: config.PublicBaseURL(config.OS), Log: log}
	if n.BaseURL == "" {
		log.Warn("PUBLIC_BASE_URL is empty: approval links will be relative")
	}
	if n.Mail, n.Slack, err = config.Channels(ctx, config.OS, params, log); err != nil {
		return nil, err
	}
	return n, nil
}
