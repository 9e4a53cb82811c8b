package store

import (
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/useprickle/prickle/shared/team"
)

// writeError wraps a failed write with what was being done, turning a lost
// conditional write into team.ErrConflict so callers can re-read and decide.
func writeError(op string, err error) error {
	if _, lost := failedCondition(err); lost {
		return fmt.Errorf("%s: %w", op, team.ErrConflict)
	}
	return fmt.Errorf("%s: %w", op, err)
}

// failedCondition reports whether err is a lost conditional write, and for a
// cancelled transaction the index of the first item that failed (else -1).
// A TransactionConflict (another transaction was writing the same item)
// counts as lost too: nothing was written and the item is changing.
func failedCondition(err error) (int, bool) {
	var cancelled *types.TransactionCanceledException
	if errors.As(err, &cancelled) {
		for i, r := range cancelled.CancellationReasons {
			switch aws.ToString(r.Code) {
			case "ConditionalCheckFailed", "TransactionConflict":
				return i, true
			}
		}
		return -1, false
	}
	var condition *types.ConditionalCheckFailedException
	var conflict *types.TransactionConflictException
	return -1, errors.As(err, &condition) || errors.As(err, &conflict)
}
