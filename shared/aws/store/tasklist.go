package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/team"
)

// Page sizes of the queries behind ListTasks (a page's own size is team.TaskQuery.PageLimit).
const (
	// filteredPageSize is how many index items a query evaluates once a
	// filter has dropped some: DynamoDB applies Limit before the filter.
	filteredPageSize = 100
	// maxQueryRounds bounds the queries behind one page; a page cut short
	// still carries a cursor that resumes exactly where it stopped.
	maxQueryRounds = 10
)

// ListTasks returns a page of a project's tasks, newest first: all of them,
// or those where q.Involving is the assignee, the requester or either
// (q.Role), optionally only in q.States. q.Limit outside 1..100 means 20 or
// 100. A cursor not issued for this query wraps team.ErrBadCursor.
func (s *Store) ListTasks(ctx context.Context, q team.TaskQuery) (team.TaskPage, error) {
	limit := q.PageLimit()
	if q.Involving != "" && (q.Role == task.RoleAny || q.Role == "") {
		return s.listInvolving(ctx, q, limit)
	}

	in, hashAttr, hashValue, err := s.taskQuery(q)
	if err != nil {
		return team.TaskPage{}, err
	}
	if q.Cursor != "" {
		ck, id, err := decodeCursor(q)
		if err != nil {
			return team.TaskPage{}, err
		}
		in.ExclusiveStartKey = startKey(hashAttr, hashValue, ck, id)
	}
	page := team.TaskPage{Tasks: []task.Task{}}
	var lastKey string // created_key of the last task in page.Tasks
	dropped := false   // the filter has dropped items of an earlier round
	for range maxQueryRounds {
		in.Limit = roundSize(limit-len(page.Tasks), dropped)
		out, err := s.db.Query(ctx, in)
		if err != nil {
			return team.TaskPage{}, fmt.Errorf("list tasks of %s: %w", q.Project, err)
		}
		dropped = dropped || out.ScannedCount > out.Count
		for _, item := range out.Items {
			if len(page.Tasks) == limit { // a further match exists: resume after the last one returned
				page.NextCursor = encodeCursor(q, lastKey)
				return page, nil
			}
			var r taskRecord
			if err := unmarshalItem(item, &r); err != nil {
				return team.TaskPage{}, fmt.Errorf("list tasks of %s: %w", q.Project, err)
			}
			page.Tasks = append(page.Tasks, r.task())
			lastKey = r.CreatedKey
		}
		if len(out.LastEvaluatedKey) == 0 {
			return page, nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
		if len(page.Tasks) == limit {
			break
		}
	}
	cursor, err := cursorAfter(q, in.ExclusiveStartKey)
	if err != nil {
		return team.TaskPage{}, fmt.Errorf("list tasks of %s: %w", q.Project, err)
	}
	page.NextCursor = cursor
	return page, nil
}

// roundSize is the Limit of a query that must find need more tasks: one
// more than needed (it tells, without another round, whether more follow),
// read and answered item by item as a page needs; once the filter has
// dropped items, at least filteredPageSize, so a sparse match costs a few
// rounds, not one round per handful of tasks.
func roundSize(need int, dropped bool) *int32 {
	size := need + 1
	if dropped {
		size = max(size, filteredPageSize)
	}
	return aws.Int32(int32(size))
}

// taskQuery picks the index for a query of one index (the whole project, its
// requested tasks, or an agent's tasks in one role) and builds its key
// condition and filter;
// it returns the index's hash key attribute and value for resuming.
func (s *Store) taskQuery(q team.TaskQuery) (*dynamodb.QueryInput, string, string, error) {
	if q.Project == "" {
		return nil, "", "", fmt.Errorf("list tasks: no project")
	}
	names := map[string]string{}
	values := map[string]types.AttributeValue{}
	var filters []string

	index, hashAttr, hashValue := "by_project", "project", q.Project
	states := q.States
	switch {
	case q.Involving == "" && len(states) == 1 && states[0] == task.Requested:
		// The sparse index holds exactly the project's requested tasks.
		index, hashAttr, states = "by_requested", "requested_project", nil
	case q.Involving == "":
	case q.Role == task.RoleAssignee || q.Role == task.RoleRequester:
		index, hashAttr, hashValue = "by_"+q.Role, q.Role, q.Involving
		names["#project"] = "project"
		values[":project"] = stringValue(q.Project)
		filters = append(filters, "#project = :project")
	default:
		return nil, "", "", fmt.Errorf("list tasks: role %q is not assignee, requester or any", q.Role)
	}
	names["#hash"] = hashAttr
	values[":hash"] = stringValue(hashValue)

	if f := stateFilter(states, names, values); f != "" {
		filters = append(filters, f)
	}

	in := &dynamodb.QueryInput{
		TableName:                 aws.String(s.tables.Tasks),
		IndexName:                 aws.String(index),
		KeyConditionExpression:    aws.String("#hash = :hash"),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
		ScanIndexForward:          aws.Bool(false),
	}
	if len(filters) > 0 {
		in.FilterExpression = aws.String(strings.Join(filters, " AND "))
	}
	return in, hashAttr, hashValue, nil
}

// stateFilter is the filter keeping tasks in the given states ("" for all),
// adding its names and values to the query's.
func stateFilter(states []task.State, names map[string]string, values map[string]types.AttributeValue) string {
	if len(states) == 0 {
		return ""
	}
	placeholders := make([]string, len(states))
	for i, st := range states {
		placeholders[i] = fmt.Sprintf(":state%d", i)
		values[placeholders[i]] = stringValue(string(st))
	}
	names["#state"] = "state"
	return "#state IN (" + strings.Join(placeholders, ", ") + ")"
}
