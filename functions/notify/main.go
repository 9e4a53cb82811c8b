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
	"github.com/useprickle/prickle/shared/aws/lambdamain"
	"github.com/useprickle/prickle/shared/aws/ses"
	"github.com/useprickle/prickle/shared/aws/settings"
	"github.com/useprickle/prickle/shared/aws/slackapi"
	"github.com/useprickle/prickle/shared/aws/store"
	"github.com/useprickle/prickle/shared/owners/notify"
)

func main() { lambdamain.Start(build) }

func build(ctx context.Context, log *slog.Logger) (any, error) {
	st := store.FromEnv()
	params := &settings.LazySSM{}
	signer, err := settings.Signer(ctx, settings.OS, params)
	if err != nil {
		return nil, err
	}
	n := &notify.Notifier{Owners: st, Ledger: st, Signer: signer, BaseURL: settings.PublicBaseURL(settings.OS), Log: log}
	if n.BaseURL == "" {
		log.Warn("PUBLIC_BASE_URL is empty: approval links will be relative")
	}
	if n.Mail, n.Slack, err = channels(ctx, settings.OS, params, log); err != nil {
		return nil, err
	}
	return bus.FromCloudWatch(n.Handle), nil
}

// channels builds the owners' channels a function is configured with:
// email through SES when FROM_EMAIL is set, Slack when a bot token is
// configured. A channel left unconfigured is nil, which turns it off.
func channels(ctx context.Context, env settings.Env, params settings.Parameters, log *slog.Logger) (notify.Mailer, notify.Slack, error) {
	var mail notify.Mailer
	var slack notify.Slack
	if from := settings.FromEmail(env); from != "" {
		m, err := ses.New(awsenv.Config(), from)
		if err != nil {
			return nil, nil, err
		}
		mail = m
	} else {
		log.Info("FROM_EMAIL is empty: email is off")
	}
	token, err := settings.SlackBotToken(ctx, env, params)
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
