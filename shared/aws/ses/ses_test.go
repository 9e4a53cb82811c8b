package ses

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"

	"github.com/useprickle/prickle/shared/owners/notify"
)

type fakeAPI struct {
	got *sesv2.SendEmailInput
	err error
}

func (f *fakeAPI) SendEmail(_ context.Context, in *sesv2.SendEmailInput, _ ...func(*sesv2.Options)) (*sesv2.SendEmailOutput, error) {
	f.got = in
	return &sesv2.SendEmailOutput{}, f.err
}

func TestSendEmail(t *testing.T) {
	api := &fakeAPI{}
	m := &Mailer{API: api, From: "prickle@example.com"}
	if err := m.SendEmail(context.Background(), notify.Email{To: "alice@example.com", Subject: "Approve Bash?", Text: "body"}); err != nil {
		t.Fatal(err)
	}
	in := api.got
	if aws.ToString(in.FromEmailAddress) != "prickle@example.com" || in.Destination.ToAddresses[0] != "alice@example.com" ||
		aws.ToString(in.Content.Simple.Subject.Data) != "Approve Bash?" || aws.ToString(in.Content.Simple.Body.Text.Data) != "body" {
		t.Errorf("input = %+v", in)
	}
	api.err = errors.New("throttled")
	if err := m.SendEmail(context.Background(), notify.Email{To: "a@example.com"}); !errors.Is(err, api.err) {
		t.Errorf("err = %v", err)
	}
	if _, err := New(aws.Config{}, ""); err == nil {
		t.Error("New without a sender succeeded")
	}
}
