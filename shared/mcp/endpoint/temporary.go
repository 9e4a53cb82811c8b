package endpoint

import (
	"errors"
	"fmt"

	"github.com/useprickle/prickle/shared/team"
)

// The outcomes a temporary failure leaves in the request log, which the
// template's metric filters count for the alarms.
const (
	OutcomeThrottled   = "throttled"
	OutcomeUnavailable = "unavailable"
)

// temporary reports whether err is a temporary database failure, with its
// outcome and the message the caller gets: what happened, that it is
// temporary, whether anything was written, and to retry.
func temporary(tool string, err error) (outcome, msg string, ok bool) {
	switch {
	case errors.Is(err, team.ErrThrottled):
		return OutcomeThrottled, fmt.Sprintf("%s could not finish: Prickle's database is throttling requests right now. "+
			"This is temporary and nothing was changed: retry the same call in a few seconds.", tool), true
	case errors.Is(err, team.ErrUnavailable):
		return OutcomeUnavailable, fmt.Sprintf("%s could not finish: Prickle's database did not answer in time. "+
			"This is temporary: retry the same call in a few seconds (if it changes a task, read the task first with get_task: the change may have gone through).", tool), true
	}
	return "", "", false
}
