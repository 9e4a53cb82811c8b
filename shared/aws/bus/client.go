package bus

import (
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"

	"github.com/useprickle/prickle/shared/aws/awsenv"
)

// NewClient builds the EventBridge client of a function from its
// environment (awsenv), talking to endpoint instead of AWS when it is set.
func NewClient(endpoint string) *eventbridge.Client {
	return eventbridge.NewFromConfig(awsenv.Config(), func(o *eventbridge.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	})
}

// FromEnv builds the EventBridge publisher a function is configured with:
// the bus EVENT_BUS_NAME (default "prickle") and, for local runs, the
// endpoint PRICKLE_EVENTS_ENDPOINT or else PRICKLE_DYNAMODB_ENDPOINT (the
// emulator serves both).
func FromEnv() *EventBridge {
	endpoint := os.Getenv("PRICKLE_EVENTS_ENDPOINT")
	if endpoint == "" {
		endpoint = os.Getenv("PRICKLE_DYNAMODB_ENDPOINT")
	}
	client := NewClient(endpoint)
	name := os.Getenv("EVENT_BUS_NAME")
	if name == "" {
		name = "prickle"
	}
	return NewEventBridge(PutEventsFunc(client.PutEvents), name)
}
