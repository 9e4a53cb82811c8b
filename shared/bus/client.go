package bus

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
)

// NewClient builds an EventBridge client from the usual AWS configuration;
// with a non-empty endpoint (the local emulator) it talks there instead,
// with us-east-1 and dummy credentials when none are configured, as
// store.NewClient does for DynamoDB.
func NewClient(ctx context.Context, endpoint string) (*eventbridge.Client, error) {
	if endpoint == "" {
		cfg, err := config.LoadDefaultConfig(ctx)
		if err != nil {
			return nil, fmt.Errorf("load AWS config: %w", err)
		}
		return eventbridge.NewFromConfig(cfg), nil
	}
	cfg, err := config.LoadDefaultConfig(ctx, config.WithEC2IMDSClientEnableState(imds.ClientDisabled))
	if err != nil {
		return nil, fmt.Errorf("load AWS config for %s: %w", endpoint, err)
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	if cfg.Credentials == nil {
		cfg.Credentials = credentials.NewStaticCredentialsProvider("local", "local", "")
	} else if _, err := cfg.Credentials.Retrieve(ctx); err != nil {
		cfg.Credentials = credentials.NewStaticCredentialsProvider("local", "local", "")
	}
	return eventbridge.NewFromConfig(cfg, func(o *eventbridge.Options) {
		o.BaseEndpoint = aws.String(endpoint)
	}), nil
}

// FromEnv builds the EventBridge publisher a function is configured with:
// the bus EVENT_BUS_NAME (default "prickle") and, for local runs, the
// endpoint PRICKLE_EVENTS_ENDPOINT or else PRICKLE_DYNAMODB_ENDPOINT (the
// emulator serves both).
func FromEnv(ctx context.Context) (*EventBridge, error) {
	endpoint := os.Getenv("PRICKLE_EVENTS_ENDPOINT")
	if endpoint == "" {
		endpoint = os.Getenv("PRICKLE_DYNAMODB_ENDPOINT")
	}
	client, err := NewClient(ctx, endpoint)
	if err != nil {
		return nil, fmt.Errorf("eventbridge client: %w", err)
	}
	name := os.Getenv("EVENT_BUS_NAME")
	if name == "" {
		name = "prickle"
	}
	return NewEventBridge(client, name), nil
}
