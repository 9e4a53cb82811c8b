// Package awsenv builds the AWS SDK configuration of Prickle's Lambda
// functions from their environment alone: the region and the credentials
// Lambda sets as variables. Functions never use profiles, SSO or the
// instance metadata service, so they do not link the SDK's full credential
// chain (about 1.6 MB of every binary, and work at every cold start).
// Operator tools (the admin CLI, the local stack) use the full chain through
// infra/cmd/prickle-admin/dynamo.Client instead.
package awsenv

import (
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// LocalRegion is the region used when none is set (a laptop against emulators).
const LocalRegion = "us-east-1"

// Config returns the function's AWS configuration. Without credentials in
// the environment (a local run against an emulator) it signs with dummy ones.
func Config() aws.Config {
	region := firstSet("AWS_REGION", "AWS_DEFAULT_REGION")
	if region == "" {
		region = LocalRegion
	}
	id, secret := os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY")
	if id == "" || secret == "" {
		id, secret = "local", "local"
	}
	return aws.Config{
		Region:      region,
		Credentials: aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider(id, secret, os.Getenv("AWS_SESSION_TOKEN"))),
	}
}

func firstSet(names ...string) string {
	for _, n := range names {
		if v := os.Getenv(n); v != "" {
			return v
		}
	}
	return ""
}
