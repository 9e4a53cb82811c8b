package store

import (
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/useprickle/prickle/shared/team"
)

// A cursor names the query that issued it and the created_key of the last
// task its page covered, base64url without padding (so it matches
// ^[A-Za-z0-9_-]+$). Resuming right after that key never skips or repeats a
// task, even as newer tasks are added, because created_key never changes and
// is unique. A cursor of another query, or not issued here, is refused with
// an error wrapping team.ErrBadCursor.

func encodeCursor(q team.TaskQuery, createdKey string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(q.Digest() + "/" + createdKey))
}

var taskIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// decodeCursor returns the created_key and task id that q.Cursor resumes after.
func decodeCursor(q team.TaskQuery) (createdKey, taskID string, err error) {
	raw, err := base64.RawURLEncoding.DecodeString(q.Cursor)
	if err == nil {
		digest, key, _ := strings.Cut(string(raw), "/")
		at, id, _ := strings.Cut(key, "#")
		_, terr := time.Parse(sortableLayout, at)
		if digest == q.Digest() && terr == nil && taskIDPattern.MatchString(id) {
			return key, id, nil
		}
	}
	return "", "", fmt.Errorf("list tasks with cursor %q: %w", q.Cursor, team.ErrBadCursor)
}

// startKey is the ExclusiveStartKey that resumes an index query after the
// task at createdKey: the index keys plus the table keys of that task.
func startKey(hashAttr, hashValue, createdKey, taskID string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		hashAttr:      stringValue(hashValue),
		"created_key": stringValue(createdKey),
		"pk":          stringValue(taskPK(taskID)),
		"sk":          stringValue(taskSK),
	}
}

// cursorAfter is the cursor that resumes q after the item a LastEvaluatedKey names.
func cursorAfter(q team.TaskQuery, lastEvaluated map[string]types.AttributeValue) (string, error) {
	ck, ok := lastEvaluated["created_key"].(*types.AttributeValueMemberS)
	if !ok {
		return "", errors.New("index query stopped at a key without created_key")
	}
	return encodeCursor(q, ck.Value), nil
}
