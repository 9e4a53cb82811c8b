package store

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// localRegion is the region used against an emulator when none is configured.
const localRegion = "us-east-1"

// NewClient builds a DynamoDB client from the usual AWS configuration. With
// a non-empty endpoint (the local emulator) it talks to that endpoint
// instead, defaults the region to us-east-1 and, when no credentials are
// configured, signs with dummy ones, so a laptop without an AWS account works.
func NewClient(ctx context.Context, endpoint string) (*dynamodb.Client, error) {
	if endpoint == "" {
		cfg, err := config.LoadDefaultConfig(ctx)
		if err != nil {
			return nil, fmt.Errorf("load AWS config: %w", err)
		}
		return dynamodb.NewFromConfig(cfg), nil
	}

	// An emulator never needs the EC2 metadata service; asking it would only
	// stall a laptop for seconds before the dummy credentials apply.
	cfg, err := config.LoadDefaultConfig(ctx, config.WithEC2IMDSClientEnableState(imds.ClientDisabled))
	if err != nil {
		return nil, fmt.Errorf("load AWS config for %s: %w", endpoint, err)
	}
	if cfg.Region == "" {
		cfg.Region = localRegion
	}
	if cfg.Credentials == nil {
		cfg.Credentials = localCredentials()
	} else if _, err := cfg.Credentials.Retrieve(ctx); err != nil {
		cfg.Credentials = localCredentials()
	}
	return dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		o.BaseEndpoint = aws.String(endpoint)
	}), nil
}

func localCredentials() aws.CredentialsProvider {
	return credentials.NewStaticCredentialsProvider("local", "local", "")
}
