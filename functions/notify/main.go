// Command notify is the Lambda function that tells owners what their agents
// ask (Step Requested, Approval Requested) and what became of it (Step
// Decided, Step Expired, Result Decided): email through SES, Slack through
// the Web API, each sent once per event.
package main

import (
	"context"
	"log/slog"

	"github.com/useprickle/prickle/shared/aws/awsenv"
	"github.com/useprickle/prickle/shared/aws/bus"
	"github.com/useprickle/prickle/shared/aws/config"
	"github.com/useprickle/prickle/shared/aws/lambdamain"
	"github.com/useprickle/prickle/shared/aws/notify"
	"github.com/useprickle/prickle/shared/aws/notify/ses"
	"github.com/useprickle/prickle/shared/aws/notify/slackapi"
	"github.com/useprickle/prickle/shared/aws/store"
)

func main() { lambdamain.Start(build) }

func build(ctx context.Context, log *slog.Logger) (any, error) {
	st := store.FromEnv()
	params := &config.LazySSM{}
	signer, err := config.Signer(ctx, config.OS, params)
	if err != nil {
		return nil, err
	}
	n := &notify.Notifier{Owners: st, Ledger: st, Signer: signer, BaseURL: config.PublicBaseURL(config.OS), Log: log}
	if n.BaseURL == "" {
		log.Warn("PUBLIC_BASE_URL is empty: approval links will be relative")
	}
	if n.Mail, n.Slack, err = channels(ctx, config.OS, params, log); err != nil {
		return nil, err
	}
	return bus.FromCloudWatch(n.Handle), nil
}

// channels builds the owners' channels a function is configured with:
// email through SES when FROM_EMAIL is set, Slack when a bot token is
// configured. A channel left unconfigured is nil, which turns it off.
func channels(ctx context.Context, env config.Env, params config.Parameters, log *slog.Logger) (notify.Mailer, notify.Slack, error) {
	var mail notify.Mailer
	var slack notify.Slack
	if from := config.FromEmail(env); from != "" {
		m, err := ses.New(awsenv.Config(), from)
		if err != nil {
			return nil, nil, err
		}
		mail = m
	} else {
		log.Info("FROM_EMAIL is empty: email is off")
	}
	token, err := config.SlackBotToken(ctx, env, params)
	if err != nil {
		return nil, nil, err
	}
	if token != "" {
		s, err := slackapi.New(token)
		if err != nil {
			return nil, nil, err
		}
		slack = s
	} else {
		log.Info("no Slack bot token: Slack is off")
	}
	return mail, slack, nil
}
