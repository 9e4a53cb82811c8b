package store

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/team"
)

// listInvolving is ListTasks for the tasks an agent is assignee OR requester
// of: it merges the agent's by_assignee and by_requester entries, newest
// first, instead of filtering the whole project's by_project entries, so
// read_room costs what the caller is involved in, not what the project
// holds. A cursor is the created_key of the last task returned; both indexes
// resume strictly below it, which neither skips nor repeats a task.
func (s *Store) listInvolving(ctx context.Context, q team.TaskQuery, limit int) (team.TaskPage, error) {
	if q.Project == "" {
		return team.TaskPage{}, fmt.Errorf("list tasks: no project")
	}
	after := ""
	if q.Cursor != "" {
		ck, _, err := decodeCursor(q)
		if err != nil {
			return team.TaskPage{}, err
		}
		after = ck
	}
	streams := []*indexStream{
		s.involvingStream(q, task.RoleAssignee, after, limit),
		s.involvingStream(q, task.RoleRequester, after, limit),
	}
	// Both indexes are first read at once; later pages only as the merge needs them.
	heads := make([]error, len(streams))
	var wg sync.WaitGroup
	for i, st := range streams {
		wg.Go(func() { _, heads[i] = st.head(ctx, s.db) })
	}
	wg.Wait()
	if err := errors.Join(heads...); err != nil {
		return team.TaskPage{}, fmt.Errorf("list tasks of %s: %w", q.Project, err)
	}
	page := team.TaskPage{Tasks: []task.Task{}}
	last := ""
	for {
		next, err := newest(ctx, s.db, streams)
		if err != nil {
			return team.TaskPage{}, fmt.Errorf("list tasks of %s: %w", q.Project, err)
		}
		switch {
		case next == nil && len(page.Tasks) == 0 && stalled(streams):
			// Rounds ran out before anything matched: resume below what both indexes have evaluated.
			page.NextCursor = encodeCursor(q, evaluatedTo(streams))
			return page, nil
		case next == nil:
			if stalled(streams) {
				page.NextCursor = encodeCursor(q, last)
			}
			return page, nil
		case len(page.Tasks) == limit:
			page.NextCursor = encodeCursor(q, last)
			return page, nil
		}
		page.Tasks = append(page.Tasks, next.task())
		last = next.CreatedKey
	}
}

// involvingStream reads one of the agent's indexes newest first, below
// after, for a page of limit tasks (either index may hold all of them).
func (s *Store) involvingStream(q team.TaskQuery, role, after string, limit int) *indexStream {
	names := map[string]string{"#role": role, "#project": "project"}
	values := map[string]types.AttributeValue{":me": stringValue(q.Involving), ":project": stringValue(q.Project)}
	key := "#role = :me"
	if after != "" {
		names["#ck"] = "created_key"
		values[":after"] = stringValue(after)
		key += " AND #ck < :after"
	}
	filter := "#project = :project"
	if f := stateFilter(q.States, names, values); f != "" {
		filter += " AND " + f
	}
	return &indexStream{in: &dynamodb.QueryInput{
		TableName:                 aws.String(s.tables.Tasks),
		IndexName:                 aws.String("by_" + role),
		KeyConditionExpression:    aws.String(key),
		FilterExpression:          aws.String(filter),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
		ScanIndexForward:          aws.Bool(false),
	}, need: limit}
}

// indexStream is one index query read page by page, with the matches of
// the current page buffered and the position it has evaluated down to.
type indexStream struct {
	in        *dynamodb.QueryInput
	need      int  // the tasks of the page, all of which this index may have to supply
	dropped   bool // the filter has dropped items of an earlier round
	buf       []taskRecord
	done      bool   // the index has nothing more below
	rounds    int    // queries made
	evaluated string // created_key of the last item the index evaluated
}

// head returns the stream's newest unreturned match, querying as needed;
// nil when the index is exhausted or out of rounds.
func (st *indexStream) head(ctx context.Context, db operations) (*taskRecord, error) {
	for len(st.buf) == 0 && !st.done && st.rounds < maxQueryRounds {
		st.in.Limit = roundSize(st.need, st.dropped)
		out, err := db.Query(ctx, st.in)
		if err != nil {
			return nil, err
		}
		st.rounds++
		st.dropped = st.dropped || out.ScannedCount > out.Count
		for _, item := range out.Items {
			var r taskRecord
			if err := unmarshalItem(item, &r); err != nil {
				return nil, err
			}
			st.buf = append(st.buf, r)
		}
		if len(out.LastEvaluatedKey) == 0 {
			st.done = true
		} else {
			st.in.ExclusiveStartKey = out.LastEvaluatedKey
			if ck, ok := out.LastEvaluatedKey["created_key"].(*types.AttributeValueMemberS); ok {
				st.evaluated = ck.Value
			}
		}
	}
	if len(st.buf) == 0 {
		return nil, nil
	}
	return &st.buf[0], nil
}

// newest pops the newest match across the streams; a task in both (the
// agent asked itself) comes once.
func newest(ctx context.Context, db operations, streams []*indexStream) (*taskRecord, error) {
	var best *taskRecord
	for _, st := range streams {
		h, err := st.head(ctx, db)
		if err != nil {
			return nil, err
		}
		if h != nil && (best == nil || h.CreatedKey > best.CreatedKey) {
			best = h
		}
	}
	// A stream out of rounds may still hold unread matches just below what
	// it evaluated: nothing older than that may be returned before them.
	if best == nil || best.CreatedKey < evaluatedTo(stalledOnly(streams)) {
		return nil, nil
	}
	pick := *best
	for _, st := range streams {
		if len(st.buf) > 0 && st.buf[0].CreatedKey == pick.CreatedKey {
			st.buf = st.buf[1:]
		}
	}
	return &pick, nil
}

// stalled reports whether a stream stopped for lack of rounds, not for lack of items.
func stalled(streams []*indexStream) bool {
	return len(stalledOnly(streams)) > 0
}

func stalledOnly(streams []*indexStream) []*indexStream {
	var out []*indexStream
	for _, st := range streams {
		if !st.done && len(st.buf) == 0 && st.rounds >= maxQueryRounds {
			out = append(out, st)
		}
	}
	return out
}

// evaluatedTo is the created_key above which every stream has evaluated
// everything (the higher of their positions; an exhausted stream has none).
func evaluatedTo(streams []*indexStream) string {
	to := ""
	for _, st := range streams {
		if !st.done && st.evaluated > to {
			to = st.evaluated
		}
	}
	return to
}
