// Package dynamo builds the DynamoDB client of the operator tools (the admin
// CLI, the local stack, the load and capacity runs) over the local stack or
// an AWS account. What template.yaml declares is read by shared/aws/cfn.
package dynamo

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/useprickle/prickle/shared/aws/store"
)

// Client builds a DynamoDB client for operator tools (the admin CLI, the
// local stack): with no endpoint, from the usual AWS configuration
// (profiles, SSO, environment); with an endpoint (the local emulator), from
// the environment alone, with dummy credentials when none are set, so a
// laptop without an AWS account works. Lambda functions use
// store.NewFunctionClient instead, which does not link the full chain.
func Client(ctx context.Context, endpoint string) (*dynamodb.Client, error) {
	if endpoint != "" {
		return store.NewFunctionClient(endpoint), nil
	}
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("load AWS config: %w", err)
	}
	return dynamodb.NewFromConfig(cfg), nil
}
