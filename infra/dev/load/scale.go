package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/useprickle/prickle/infra/cmd/prickle-admin/dynamo"
	"github.com/useprickle/prickle/shared/aws/store"
	"github.com/useprickle/prickle/shared/team/admin"
)

// scaleOptions are the -scale mode's flags: the two scale tables of docs/measurements.md.
type scaleOptions struct {
	tasks    int           // grow one project to this many tasks
	levels   []int         // concurrent agents per run
	duration time.Duration // how long each concurrent run plays
	timeout  time.Duration // the client's timeout per call
}

// scaleCheckpoints are the project sizes the sequential table measures at.
var scaleCheckpoints = []int{1, 201, 401, 801, 1601, 3201, 5000, 10000, 20000}

// scaleRepeats is how many times each call is timed per checkpoint (the median is printed).
const scaleRepeats = 11

// runScale starts a local stack of its own, grows one project through
// hand_off_task and times read_room, get_task and hand_off_task as it grows;
// restarts the stack on that state and times how long it takes to be ready,
// against fresh starts (readyTimes);
// then plays each level of concurrent agents as fast as answers come.
func runScale(ctx context.Context, o options, so scaleOptions) error {
	dir, err := os.MkdirTemp("", "prickle-scale-")
	if err != nil {
		return fmt.Errorf("state dir: %w", err)
	}
	defer os.RemoveAll(dir)
	defer os.RemoveAll(dir + "-levels")
	defer os.RemoveAll(dir + "-fresh")
	own, err := startStackIn(ctx, dir, true)
	if err != nil {
		return err
	}
	fmt.Printf("scale: a fresh stack was ready in %.1f s\n", own.ready.Seconds())
	rows, err := sequential(ctx, own, so)
	own.halt()
	if err != nil {
		return err
	}
	fresh, restarted, err := readyTimes(ctx, dir)
	if err != nil {
		return err
	}
	fmt.Printf("scale: the stack restarted on %d tasks was ready in %.2f s (fresh %.2f s: %.2f×; medians of %d)\n", rows[len(rows)-1].tasks, restarted.Seconds(), fresh.Seconds(), restarted.Seconds()/fresh.Seconds(), readyRepeats)

	var conc []concurrentRow
	for i, n := range so.levels {
		row, err := concurrentOnCopy(ctx, dir, filepath.Join(dir+"-levels", strconv.Itoa(i)), o, so, n)
		if err != nil {
			return err
		}
		conc = append(conc, row)
		fmt.Println(row.line())
	}

	fmt.Printf("\n| tasks in the project | read_room | get_task | hand_off_task |\n|---:|---:|---:|---:|\n")
	for _, r := range rows {
		fmt.Printf("| %d | %s | %s | %s |\n", r.tasks, ms(r.readRoom), ms(r.getTask), ms(r.handOff))
	}
	last := rows[len(rows)-1]
	fmt.Printf("\nat %d tasks vs 1: read_room %.2f×, get_task %.2f×, hand_off_task %.2f×\n", last.tasks,
		ratio(last.readRoom, rows[0].readRoom), ratio(last.getTask, rows[0].getTask), ratio(last.handOff, rows[0].handOff))
	fmt.Printf("ready: fresh %.2f s, restarted on %d tasks %.2f s\n", fresh.Seconds(), last.tasks, restarted.Seconds())
	fmt.Printf("\n| agents | calls | calls/s | p50 | p99 | errors | timeouts (%s) |\n|---:|---:|---:|---:|---:|---:|---:|\n", so.timeout)
	for _, r := range conc {
		fmt.Printf("| %d | %d | %.1f | %s | %s | %d | %d |\n", r.agents, r.calls, r.rate, ms(r.p50), ms(r.p99), r.errors, r.timeouts)
	}
	return nil
}

func ratio(a, b time.Duration) float64 { return float64(a) / float64(max(b, time.Microsecond)) }

// seqRow is one line of the sequential table: medians at a project size.
type seqRow struct {
	tasks                      int
	readRoom, getTask, handOff time.Duration
}

// sequential grows one project and times the three calls at each checkpoint.
func sequential(ctx context.Context, own *ownStack, so scaleOptions) ([]seqRow, error) {
	info, err := readStack(own.stateFile)
	if err != nil {
		return nil, err
	}
	client, err := dynamo.Client(ctx, info.DynamoDBEndpoint)
	if err != nil {
		return nil, err
	}
	st := store.New(client, store.Tables{Tasks: info.Tables["TasksTable"], Steps: info.Tables["StepsTable"], Pulse: info.Tables["PulseTable"], Directory: info.Tables["DirectoryTable"]})
	teams, err := setUp(ctx, admin.New(st), options{agents: 2, team: 2})
	if err != nil {
		return nil, err
	}
	tm := teams[0]
	req, asg := tm.agents[0], tm.agents[1]
	mc := newMCPClient(info.MCPURL, so.timeout)
	handOff := func() answer {
		return mc.call(ctx, req.token, "hand_off_task", map[string]any{"project": tm.project, "assignee": asg.id, "packet": map[string]any{
			"task": "Draft copy block for the landing page.", "deliverable_type": "answer", "acceptance_criteria": []string{"At most 12 words."}}})
	}
	first := handOff()
	if first.kind != kindOK {
		return nil, fmt.Errorf("the first hand_off_task answered %s: %s", first.kind, clip(first.text, 300))
	}
	firstID := taskIDOf(first.content)
	count := 1
	var rows []seqRow
	for _, target := range scaleCheckpoints {
		if target > so.tasks {
			target = so.tasks
		}
		if target < count || (len(rows) > 0 && rows[len(rows)-1].tasks >= so.tasks) {
			break
		}
		grown, err := grow(ctx, handOff, target-count)
		count += grown
		if err != nil {
			return nil, err
		}
		if grown > 0 {
			if err := settle(ctx, client, info.Tables["TasksTable"], filepath.Join(own.dir, "dynamodb.log"), handOff); err != nil {
				return nil, err
			}
			count++
		}
		timed := func(call func() answer) (time.Duration, error) {
			var ds []time.Duration
			for range scaleRepeats {
				a := call()
				if a.kind != kindOK {
					return 0, fmt.Errorf("at %d tasks a call answered %s: %s", count, a.kind, clip(a.text, 300))
				}
				ds = append(ds, a.latency)
			}
			slices.Sort(ds)
			return ds[len(ds)/2], nil
		}
		row := seqRow{tasks: count}
		if row.readRoom, err = timed(func() answer {
			return mc.call(ctx, asg.token, "read_room", map[string]any{"project": tm.project, "role": "any", "states": []string{"routed", "accepted", "working", "verifying"}, "limit": 20})
		}); err != nil {
			return nil, err
		}
		if row.getTask, err = timed(func() answer { return mc.call(ctx, asg.token, "get_task", map[string]any{"task_id": firstID}) }); err != nil {
			return nil, err
		}
		if row.handOff, err = timed(handOff); err != nil {
			return nil, err
		}
		count += scaleRepeats
		rows = append(rows, row)
		fmt.Printf("scale: %5d tasks  read_room %s  get_task %s  hand_off_task %s\n", row.tasks, ms(row.readRoom), ms(row.getTask), ms(row.handOff))
	}
	return rows, nil
}

// settleTime bounds how long settle waits for the stack to catch up.
const settleTime = 2 * time.Minute

// settle hands off one more task and waits until the stack has filed its
// history line from the tasks stream: the lines of the burst that grew the
// project come before it in the stream, so the stack is then idle again and
// the calls timed next measure a project of that size, not the backlog of
// hundreds of hand-offs made in a few seconds (a team's stack does not see
// such bursts; the concurrent table measures load). It then waits until the
// stack's other followers (events, wake-ups) are done too: until the
// emulator's write log at writeLog has not grown for quietTime.
func settle(ctx context.Context, db *dynamodb.Client, table, writeLog string, handOff func() answer) error {
	a := handOff()
	if a.kind != kindOK {
		return fmt.Errorf("settling, hand_off_task answered %s: %s", a.kind, clip(a.text, 300))
	}
	key := map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "TASK#" + taskIDOf(a.content)},
		"sk": &types.AttributeValueMemberS{Value: "HIST#000001"},
	}
	started := time.Now()
	for time.Since(started) < settleTime {
		out, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: key})
		if err != nil {
			return fmt.Errorf("settling: %w", err)
		}
		if len(out.Item) > 0 {
			filed := time.Since(started)
			if err := quiet(ctx, writeLog, started); err != nil {
				return err
			}
			fmt.Printf("scale: the stack caught up with the hand-offs in %.1f s, and wrote nothing more after %.1f s\n", filed.Seconds(), time.Since(started).Seconds())
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
	return fmt.Errorf("settling: the stack had not filed the last hand-off's history after %s", settleTime)
}

// quietTime is how long the emulator's write log must stay the same size
// for the stack to count as idle.
const quietTime = time.Second

// quiet waits until the file at path has not grown for quietTime, or fails
// once settleTime has passed since started.
func quiet(ctx context.Context, path string, started time.Time) error {
	size, since := int64(-1), time.Now()
	for time.Since(started) < settleTime {
		info, err := os.Stat(path)
		if err != nil {
			return fmt.Errorf("settling: %w", err)
		}
		if info.Size() != size {
			size, since = info.Size(), time.Now()
		} else if time.Since(since) >= quietTime {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("settling: the stack was still writing after %s (%s)", settleTime, path)
}

// growers is how many hand-offs grow the project at once between checkpoints.
const growers = 8

// grow hands off n tasks, growers at a time, and returns how many landed.
func grow(ctx context.Context, handOff func() answer, n int) (int, error) {
	var done atomic.Int64
	var left atomic.Int64
	left.Store(int64(n))
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for range growers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for left.Add(-1) >= 0 && ctx.Err() == nil {
				a := handOff()
				if a.kind != kindOK {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("growing the project, hand_off_task answered %s: %s", a.kind, clip(a.text, 300))
					}
					mu.Unlock()
					return
				}
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	return int(done.Load()), firstErr
}

// concurrentRow is one line of the concurrent table.
type concurrentRow struct {
	agents, calls, errors, timeouts int
	rate                            float64
	p50, p99                        time.Duration
}

func (r concurrentRow) line() string {
	return fmt.Sprintf("scale: %3d agents  %6d calls  %6.1f calls/s  p50 %s  p99 %s  errors %d  timeouts %d",
		r.agents, r.calls, r.rate, ms(r.p50), ms(r.p99), r.errors, r.timeouts)
}

// readyRepeats is how many starts each ready time is the median of.
const readyRepeats = 3

// readyTimes starts a fresh stack (on a throw-away state dir) and restarts
// the stack on grown, by turns, readyRepeats times each, and returns the
// median time until each was ready: one start is under a second or two,
// where one busy moment of the machine would move the ratio.
func readyTimes(ctx context.Context, grown string) (fresh, restarted time.Duration, err error) {
	var fs, rs []time.Duration
	for i := range readyRepeats {
		dir := filepath.Join(grown+"-fresh", strconv.Itoa(i))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return 0, 0, fmt.Errorf("fresh state dir: %w", err)
		}
		own, err := startStackIn(ctx, dir, true)
		if err != nil {
			return 0, 0, err
		}
		own.stop(false)
		fs = append(fs, own.ready)
		if own, err = startStackIn(ctx, grown, false); err != nil {
			return 0, 0, err
		}
		own.halt()
		rs = append(rs, own.ready)
	}
	slices.Sort(fs)
	slices.Sort(rs)
	return fs[len(fs)/2], rs[len(rs)/2], nil
}

// concurrentOnCopy plays one level of concurrent agents on a stack started
// from a copy of the grown project's state, so every level meets the same
// data: run one after another on one stack, each level would also pay for
// the tasks the levels before it left behind.
func concurrentOnCopy(ctx context.Context, grown, dir string, o options, so scaleOptions, n int) (concurrentRow, error) {
	if err := os.CopyFS(dir, os.DirFS(grown)); err != nil {
		return concurrentRow{}, fmt.Errorf("copy the grown state for %d agents: %w", n, err)
	}
	own, err := startStackIn(ctx, dir, false)
	if err != nil {
		return concurrentRow{}, err
	}
	defer own.halt()
	return concurrent(ctx, own, o, so, n)
}

// concurrent plays n agents (teams of o.team, no racers) with almost no
// thinking for so.duration and sums their calls up.
func concurrent(ctx context.Context, own *ownStack, o options, so scaleOptions, n int) (concurrentRow, error) {
	info, err := readStack(own.stateFile)
	if err != nil {
		return concurrentRow{}, err
	}
	client, err := dynamo.Client(ctx, info.DynamoDBEndpoint)
	if err != nil {
		return concurrentRow{}, err
	}
	st := store.New(client, store.Tables{Tasks: info.Tables["TasksTable"], Steps: info.Tables["StepsTable"], Pulse: info.Tables["PulseTable"], Directory: info.Tables["DirectoryTable"]})
	teams, err := setUp(ctx, admin.New(st), options{agents: n, team: min(o.team, n)})
	if err != nil {
		return concurrentRow{}, err
	}
	s := &sim{client: newMCPClient(info.MCPURL, so.timeout), stats: newStats(), ledger: newLedger(), think: time.Millisecond}
	playCtx, cancel := context.WithTimeout(ctx, so.duration)
	defer cancel()
	var wg sync.WaitGroup
	seed := uint64(time.Now().UnixNano())
	for ti, tm := range teams {
		for ai, ag := range tm.agents {
			wg.Add(1)
			go func() { defer wg.Done(); s.runAgent(playCtx, ag, seed+uint64(ti)*1000+uint64(ai)+1) }()
		}
	}
	start := time.Now()
	wg.Wait()
	elapsed := time.Since(start)
	s.stats.mu.Lock()
	defer s.stats.mu.Unlock()
	var all []time.Duration
	for _, l := range s.stats.lat {
		all = append(all, l...)
	}
	row := concurrentRow{agents: n, calls: s.stats.calls, rate: float64(s.stats.calls) / elapsed.Seconds(), p50: percentile(all, 50), p99: percentile(all, 99)}
	for k, c := range s.stats.kinds {
		if !expected(k) {
			row.errors += c
		}
	}
	row.timeouts = s.stats.timeouts
	return row, nil
}

// isTimeout reports whether a transport failure was the client's own timeout.
func isTimeout(a answer) bool {
	return a.kind == kindTransport && (strings.Contains(a.text, "Client.Timeout") || strings.Contains(a.text, "deadline exceeded"))
}
