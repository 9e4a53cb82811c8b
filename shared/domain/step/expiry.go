package step

import "time"

// A step's lifetime: pending until its project's deadline, then, once
// approved, usable for UseWindow. ExpiresAt holds the current end, and the
// steps table's TTL attribute follows it (DynamoDB deletes late, so every
// read applies Effective).

// UseWindow is how long an approved step may be used.
const UseWindow = 15 * time.Minute

// DefaultPendingDeadline is how long a step waits for its owner unless the project says otherwise.
const DefaultPendingDeadline = 24 * time.Hour

// Effective returns the step as it stands at now: a pending or approved step
// past its expiry is expired even if no writer has said so yet.
func (s Step) Effective(now time.Time) Step {
	if (s.Status == Pending || s.Status == Approved) && !now.Before(s.ExpiresAt) {
		s.Status = Expired
	}
	return s
}
