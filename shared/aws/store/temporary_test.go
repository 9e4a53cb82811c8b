package store

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/useprickle/prickle/shared/team"
)

func cancelled(codes ...string) error {
	var reasons []types.CancellationReason
	for _, c := range codes {
		reasons = append(reasons, types.CancellationReason{Code: aws.String(c)})
	}
	return fmt.Errorf("transact: %w", &types.TransactionCanceledException{CancellationReasons: reasons})
}

func httpStatus(code int, err error) error {
	return &awshttp.ResponseError{ResponseError: &smithyhttp.ResponseError{Response: &smithyhttp.Response{Response: &http.Response{StatusCode: code}}, Err: err}}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want error
	}{
		{"provisioned throughput exceeded", &types.ProvisionedThroughputExceededException{}, team.ErrThrottled},
		{"throttling", &smithy.GenericAPIError{Code: "ThrottlingException"}, team.ErrThrottled},
		{"request limit exceeded", &types.RequestLimitExceeded{}, team.ErrThrottled},
		{"transaction cancelled for throughput", cancelled("ThrottlingError", "None"), team.ErrThrottled},
		{"transaction cancelled for a condition and throughput", cancelled("ThrottlingError", "ConditionalCheckFailed"), nil},
		{"transaction cancelled for a condition", cancelled("None", "ConditionalCheckFailed"), nil},
		{"internal server error", httpStatus(500, &types.InternalServerError{}), team.ErrUnavailable},
		{"service unavailable", httpStatus(503, errors.New("unavailable")), team.ErrUnavailable},
		{"deadline", fmt.Errorf("get: %w", context.DeadlineExceeded), team.ErrUnavailable},
		{"condition failed", &types.ConditionalCheckFailedException{}, nil},
		{"bad request", httpStatus(400, &smithy.GenericAPIError{Code: "ValidationException"}), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := classify(tt.err); !errors.Is(got, tt.want) || (tt.want == nil) != (got == nil) {
				t.Errorf("classify = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestRetryBounds: the functions' client tries at most MaxAttempts times,
// retries a transaction cancelled only for throughput, never one whose
// condition failed, and gives each attempt a deadline that fits Lambda's 10 s.
func TestRetryBounds(t *testing.T) {
	r := newRetryer()
	if r.MaxAttempts() != MaxAttempts {
		t.Errorf("MaxAttempts %d, want %d", r.MaxAttempts(), MaxAttempts)
	}
	if !r.IsErrorRetryable(cancelled("ThrottlingError")) {
		t.Error("a transaction cancelled for throughput is not retried")
	}
	if r.IsErrorRetryable(cancelled("ConditionalCheckFailed")) {
		t.Error("a transaction whose condition failed is retried")
	}
	for attempt := 1; attempt < MaxAttempts; attempt++ {
		if d, err := r.RetryDelay(attempt, &types.ProvisionedThroughputExceededException{}); err != nil || d > MaxBackoff {
			t.Errorf("backoff after attempt %d: %v %v, at most %v", attempt, d, err, MaxBackoff)
		}
	}
	if worst := MaxAttempts*AttemptTimeout + (MaxAttempts-1)*MaxBackoff; worst >= 10*time.Second {
		t.Errorf("worst case %v does not fit a 10 s Lambda", worst)
	}
	c := NewFunctionClient("")
	if c.Options().RetryMaxAttempts > MaxAttempts || c.Options().Retryer.MaxAttempts() != MaxAttempts {
		t.Errorf("client retries %d times", c.Options().Retryer.MaxAttempts())
	}
}
