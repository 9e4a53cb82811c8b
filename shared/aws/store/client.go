package store

import (
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/useprickle/prickle/shared/aws/awsenv"
)

// The bounds of every DynamoDB call a function makes, so a tool answers
// within its Lambda's 10 s (template.yaml's Globals) even when DynamoDB
// throttles or hangs: at most MaxAttempts tries of AttemptTimeout each,
// with at most MaxBackoff between them (3 × 2 s + 2 × 1 s = 8 s).
const (
	MaxAttempts    = 3
	MaxBackoff     = time.Second
	AttemptTimeout = 2 * time.Second
	// EmulatorAttemptTimeout replaces AttemptTimeout against a configured
	// endpoint: the single-threaded local emulator queues concurrent requests
	// for seconds under load, which DynamoDB does not.
	EmulatorAttemptTimeout = 30 * time.Second
	// EmulatorConnections caps a client's connections in flight to a
	// configured endpoint; further requests wait in the client, first come
	// first served. The local emulator serves one request at a time: measured
	// with 200 agents (infra/dev/load -scale), uncapped clients opened about 200
	// and halved its throughput, while 16 keep it busy and queue nothing there.
	EmulatorConnections = 16
)

// NewFunctionClient builds the DynamoDB client of a Lambda function from its
// environment (awsenv), talking to endpoint instead of AWS when it is set,
// with bounded retries and per-attempt deadlines; opts adjust it after that
// (tests shorten the deadline).
func NewFunctionClient(endpoint string, opts ...func(*dynamodb.Options)) *dynamodb.Client {
	timeout := AttemptTimeout
	if endpoint != "" {
		timeout = EmulatorAttemptTimeout
	}
	all := append([]func(*dynamodb.Options){func(o *dynamodb.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
		o.Retryer = newRetryer()
		o.HTTPClient = awshttp.NewBuildableClient().WithTimeout(timeout).WithTransportOptions(func(t *http.Transport) {
			t.MaxIdleConnsPerHost = 64
			if endpoint != "" {
				t.MaxConnsPerHost = EmulatorConnections
			}
		})
		o.APIOptions = append(o.APIOptions, markTemporary)
	}}, opts...)
	return dynamodb.NewFromConfig(awsenv.Config(), all...)
}

// newRetryer is the SDK's standard retryer within the bounds above, which
// also retries a transaction cancelled only for throughput (nothing was
// written, so trying again is safe; the SDK's token makes it idempotent).
func newRetryer() aws.Retryer {
	return retry.NewStandard(func(o *retry.StandardOptions) {
		o.MaxAttempts = MaxAttempts
		o.MaxBackoff = MaxBackoff
		o.Retryables = append(o.Retryables, retry.IsErrorRetryableFunc(func(err error) aws.Ternary {
			if throttledTransaction(err) {
				return aws.TrueTernary
			}
			return aws.UnknownTernary
		}))
		o.Throttles = append(o.Throttles, retry.IsErrorThrottleFunc(func(err error) aws.Ternary {
			if throttledTransaction(err) {
				return aws.TrueTernary
			}
			return aws.UnknownTernary
		}))
	})
}
