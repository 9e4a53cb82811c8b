package config

import (
	"context"
	"fmt"
	"log/slog"

	awsconfig "github.com/aws/aws-sdk-go-v2/config"

	"github.com/useprickle/prickle/shared/notify"
	"github.com/useprickle/prickle/shared/notify/ses"
	"github.com/useprickle/prickle/shared/notify/slackapi"
)

// Channels builds the owners' channels a function is configured with:
// email through SES when FROM_EMAIL is set, Slack when a bot token is
// configured. A channel left unconfigured is nil, which turns it off.
func Channels(ctx context.Context, env Env, params Parameters, log *slog.Logger) (notify.Mailer, notify.Slack, error) {
	var mail notify.Mailer
	var slack notify.Slack
	if from := FromEmail(env); from != "" {
		cfg, err := awsconfig.LoadDefaultConfig(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("load AWS config for SES: %w", err)
		}
		m, err := ses.New(cfg, from)
		if err != nil {
			return nil, nil, err
		}
		mail = m
	} else {
		log.Info("FROM_EMAIL is empty: email is off")
	}
	token, err := SlackBotToken(ctx, env, params)
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
