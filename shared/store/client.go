package store

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/useprickle/prickle/shared/awsenv"
)

// NewFunctionClient builds the DynamoDB client of a Lambda function from its
// environment (awsenv), talking to endpoint instead of AWS when it is set.
func NewFunctionClient(endpoint string) *dynamodb.Client {
	return dynamodb.NewFromConfig(awsenv.Config(), func(o *dynamodb.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	})
}
