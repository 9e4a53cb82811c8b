package team

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"

	"github.com/useprickle/prickle/shared/domain/task"
)

// Page sizes of ListTasks, the same in every store: a limit below 1 means
// DefaultTaskLimit, above MaxTaskLimit means MaxTaskLimit.
const (
	DefaultTaskLimit = 20
	MaxTaskLimit     = 100
)

// PageLimit is q.Limit bounded as every store bounds a page.
func (q TaskQuery) PageLimit() int {
	if q.Limit <= 0 {
		return DefaultTaskLimit
	}
	return min(q.Limit, MaxTaskLimit)
}

// Digest identifies a query without its limit and cursor, so a store's
// cursor can name the query that issued it and refuse it for another.
func (q TaskQuery) Digest() string {
	states := make([]string, len(q.States))
	for i, st := range q.States {
		states[i] = string(st)
	}
	slices.Sort(states)
	role := q.Role
	if role == "" {
		role = task.RoleAny
	}
	sum := sha256.Sum256([]byte(strings.Join([]string{q.Project, q.Involving, role, strings.Join(states, ",")}, "\x00")))
	return hex.EncodeToString(sum[:8])
}
