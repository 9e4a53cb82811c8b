package store

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"

	"github.com/useprickle/prickle/shared/team"
)

// throttleCodes are the error codes (and transaction cancellation reasons)
// by which DynamoDB refuses a request for throughput.
var throttleCodes = map[string]bool{
	"ProvisionedThroughputExceededException": true,
	"ProvisionedThroughputExceeded":          true,
	"ThrottlingException":                    true,
	"ThrottlingError":                        true,
	"RequestLimitExceeded":                   true,
}

// throttledTransaction reports whether err is a cancelled transaction whose
// only failures are throughput ones (no condition failed, nothing written).
func throttledTransaction(err error) bool {
	var cancelled *types.TransactionCanceledException
	if !errors.As(err, &cancelled) {
		return false
	}
	throttled := false
	for _, r := range cancelled.CancellationReasons {
		switch code := aws.ToString(r.Code); {
		case throttleCodes[code]:
			throttled = true
		case code != "" && code != "None":
			return false
		}
	}
	return throttled
}

// classify tells whether a failed DynamoDB call is temporary: team.ErrThrottled
// for a refusal for throughput, team.ErrUnavailable for a server error, a
// timeout or a lost connection; nil for anything else (a lost condition, a
// bad request), which stays as it is.
func classify(err error) error {
	var api smithy.APIError
	if throttledTransaction(err) || (errors.As(err, &api) && throttleCodes[api.ErrorCode()]) {
		return team.ErrThrottled
	}
	var resp *awshttp.ResponseError
	if errors.As(err, &resp) && resp.HTTPStatusCode() >= 500 {
		return team.ErrUnavailable
	}
	var netErr net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout()) {
		return team.ErrUnavailable
	}
	if retry.IsErrorRetryables(retry.DefaultRetryables).IsErrorRetryable(err).Bool() {
		return team.ErrUnavailable
	}
	return nil
}

// markTemporary adds, outside the retries, a step that wraps a failure that
// is still temporary after them with team.ErrThrottled or team.ErrUnavailable,
// so the tools can tell the caller to retry without seeing AWS types.
func markTemporary(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("prickleMarkTemporary",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			out, md, err := next.HandleInitialize(ctx, in)
			if err != nil {
				if kind := classify(err); kind != nil {
					err = fmt.Errorf("%w: %w", kind, err)
				}
			}
			return out, md, err
		}), middleware.Before)
}
