// Package ses sends owners' emails through Amazon SES v2 (SendEmail,
// simple content, plain text): notify's Mailer in the cloud.
package ses

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	"github.com/aws/aws-sdk-go-v2/service/sesv2/types"

	"github.com/useprickle/prickle/shared/owners/notify"
)

// API is the one SES v2 call used, so tests can stand in for it; *sesv2.Client satisfies it.
type API interface {
	SendEmail(ctx context.Context, in *sesv2.SendEmailInput, opts ...func(*sesv2.Options)) (*sesv2.SendEmailOutput, error)
}

// Mailer sends from one verified address (FROM_EMAIL).
type Mailer struct {
	API  API
	From string
}

// New builds a Mailer from an AWS config and the sender address; an empty
// sender is an error, since the caller should leave email off instead.
func New(cfg aws.Config, from string) (*Mailer, error) {
	if from == "" {
		return nil, errors.New("ses mailer: no sender address (FROM_EMAIL)")
	}
	return &Mailer{API: sesv2.NewFromConfig(cfg), From: from}, nil
}

// SendEmail sends e as a UTF-8 plain-text email.
func (m *Mailer) SendEmail(ctx context.Context, e notify.Email) error {
	utf8 := aws.String("UTF-8")
	_, err := m.API.SendEmail(ctx, &sesv2.SendEmailInput{
		FromEmailAddress: aws.String(m.From),
		Destination:      &types.Destination{ToAddresses: []string{e.To}},
		Content: &types.EmailContent{Simple: &types.Message{
			Subject: &types.Content{Data: aws.String(e.Subject), Charset: utf8},
			Body:    &types.Body{Text: &types.Content{Data: aws.String(e.Text), Charset: utf8}},
		}},
	})
	if err != nil {
		return fmt.Errorf("ses send email %q: %w", e.Subject, err)
	}
	return nil
}

var _ notify.Mailer = (*Mailer)(nil)
