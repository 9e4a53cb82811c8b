package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/useprickle/prickle/infra/cmd/prickle-admin/dynamo"
	"github.com/useprickle/prickle/infra/dev/invariants"
	"github.com/useprickle/prickle/shared/aws/store"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/admin"
)

// run sets up the teams, plays them for the duration, reports and checks.
func run(ctx context.Context, o options) (ok bool, err error) {
	path := o.state
	if o.start {
		st, err := startStack(ctx)
		if err != nil {
			return false, err
		}
		defer func() { st.stop(!ok) }()
		path = st.stateFile
	}
	info, err := readStack(path)
	if err != nil {
		return false, err
	}
	client, err := dynamo.Client(ctx, info.DynamoDBEndpoint)
	if err != nil {
		return false, err
	}
	st := store.New(client, store.Tables{Tasks: info.Tables["TasksTable"], Steps: info.Tables["StepsTable"], Pulse: info.Tables["PulseTable"], Directory: info.Tables["DirectoryTable"]})
	fmt.Printf("load: %d agents in teams of %d for %s against %s\n", o.agents, o.team, o.duration, info.MCPURL)
	setupStart := time.Now()
	teams, err := setUp(ctx, admin.New(st), o)
	if err != nil {
		return false, err
	}
	fmt.Printf("load: %d projects, %d agents and their tokens created in %.1f s\n", len(teams), o.agents, time.Since(setupStart).Seconds())

	s := &sim{client: newMCPClient(info.MCPURL, 60*time.Second), stats: newStats(), ledger: newLedger(), think: o.think}
	playCtx, cancel := context.WithTimeout(ctx, o.duration)
	defer cancel()
	var wg sync.WaitGroup
	seed := uint64(time.Now().UnixNano())
	for ti, tm := range teams {
		wg.Add(1)
		go func() { defer wg.Done(); s.runRacer(playCtx, tm, seed+uint64(ti)*1000) }()
		for ai, ag := range tm.agents {
			wg.Add(1)
			go func() { defer wg.Done(); s.runAgent(playCtx, ag, seed+uint64(ti)*1000+uint64(ai)+1) }()
		}
	}
	start := time.Now()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	tick := time.NewTicker(10 * time.Second)
	defer tick.Stop()
wait:
	for {
		select {
		case <-done:
			break wait
		case <-tick.C:
			fmt.Println(s.stats.progress(time.Since(start)))
		}
	}
	elapsed := time.Since(start)
	s.stats.report(os.Stdout, elapsed)

	checkStart := time.Now()
	violations := check(ctx, st, s.ledger, teams, o.settle)
	fmt.Printf("\nchecked in %.1f s", time.Since(checkStart).Seconds())
	fmt.Printf("\ninvariants over %d tasks and %d races (%s): %d violations\n", len(s.ledger.allTasks()), len(s.ledger.races), s.ledger.raceLine(), len(violations))
	for i, v := range violations {
		if i == 20 {
			fmt.Printf("  … and %d more\n", len(violations)-20)
			break
		}
		fmt.Println("  " + v)
	}
	unexpected := s.stats.unexpected()
	fmt.Printf("unexpected answers: %d (tolerated %d)\n", unexpected, o.maxUnexpected)
	return len(violations) == 0 && unexpected <= o.maxUnexpected, nil
}

// setUp creates one project per team, its owner, its agents and their tokens.
func setUp(ctx context.Context, adm *admin.Admin, o options) ([]*teamOf, error) {
	b := make([]byte, 3)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("run id: %w", err)
	}
	runID := hex.EncodeToString(b)
	count := max(1, o.agents/o.team)
	teams := make([]*teamOf, count)
	for i := range teams {
		n := o.agents / count
		if i < o.agents%count {
			n++
		}
		teams[i] = &teamOf{project: fmt.Sprintf("load-%s-%02d", runID, i), agents: make([]*agent, n)}
	}
	jobs := make(chan func() error)
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				if err := j(); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		}()
	}
	for _, tm := range teams {
		owner := tm.project
		if err := adm.CreateProject(ctx, team.Project{Slug: tm.project, Name: "Load " + tm.project}); err != nil {
			return nil, err
		}
		if err := adm.CreateOwner(ctx, team.Owner{Name: owner, Email: owner + "@example.com"}); err != nil {
			return nil, err
		}
		for ai := range tm.agents {
			ag := &agent{id: fmt.Sprintf("%s/a%03d", owner, ai), team: tm}
			tm.agents[ai] = ag
			jobs <- func() error {
				if err := adm.CreateAgent(ctx, ag.id, []string{tm.project}); err != nil {
					return err
				}
				secret, err := adm.MintAgentToken(ctx, ag.id)
				ag.token = secret
				return err
			}
		}
	}
	close(jobs)
	wg.Wait()
	select {
	case err := <-errs:
		return nil, fmt.Errorf("set up the teams: %w", err)
	default:
	}
	return teams, nil
}

func (l *ledger) allTasks() map[string]bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	ids := map[string]bool{}
	for id := range l.moves {
		ids[id] = true
	}
	for id := range l.unknown {
		ids[id] = true
	}
	return ids
}

// check reads every task of the teams' projects (and every task the load
// saw) through the store and returns what breaks the invariants.
func check(ctx context.Context, st *store.Store, l *ledger, teams []*teamOf, settle time.Duration) []string {
	ids := l.allTasks()
	var out []string
	for _, tm := range teams {
		cursor := ""
		for {
			var page team.TaskPage
			err := patiently(func() (err error) {
				page, err = st.ListTasks(ctx, team.TaskQuery{Project: tm.project, Role: "any", Limit: 100, Cursor: cursor})
				return err
			})
			if err != nil {
				return append(out, fmt.Sprintf("list the tasks of %s: %v", tm.project, err))
			}
			for _, t := range page.Tasks {
				ids[t.ID] = true
			}
			if cursor = page.NextCursor; cursor == "" {
				break
			}
		}
	}
	histories := map[string][]task.Event{}
	project := map[string]string{}
	for _, tm := range teams {
		for _, ag := range tm.agents {
			project[ag.id] = tm.project
		}
	}
	for id := range ids {
		t, h, err := settled(ctx, st, id, settle)
		if err != nil {
			out = append(out, fmt.Sprintf("task %s: %v", id, err))
			continue
		}
		histories[id] = h
		if err := invariants.Replay(t, h); err != nil {
			out = append(out, fmt.Sprintf("task %s: not a path through the state machine: %v", id, err))
		}
		l.mu.Lock()
		seen, unknown := l.moves[id], l.unknown[id]
		if !slices.ContainsFunc(seen, func(m move) bool { return m.Action == "hand_off" }) && l.unknownHandOffs[project[t.Requester]] > 0 {
			l.unknownHandOffs[project[t.Requester]]--
			unknown++ // a hand-off whose answer was lost may have created it
		}
		l.mu.Unlock()
		if err := lostOrPhantom(h, seen, unknown); err != nil {
			out = append(out, fmt.Sprintf("task %s: %v", id, err))
		}
	}
	for _, r := range l.races {
		if r.Winners > 1 || (r.Winners == 0 && r.Other == 0) {
			out = append(out, fmt.Sprintf("race of %d %s calls on %s: %d winners, %d refused as stale, %d other answers", r.Calls, r.Tool, r.TaskID, r.Winners, r.Lost, r.Other))
		}
		moves := 0
		for _, e := range histories[r.TaskID] {
			if (r.Tool == "accept_task" && e.Action == "accept") || (r.Tool == "review_result" && len(e.Action) > 7 && e.Action[:7] == "review_") {
				moves++
			}
		}
		if moves > 1 {
			out = append(out, fmt.Sprintf("race of %s on %s: %d moves in the history, want one", r.Tool, r.TaskID, moves))
		}
	}
	return out
}

// settled reads a task and its history, giving the history up to settle to
// catch up with the task's version (lines may be written after the task).
func settled(ctx context.Context, st *store.Store, id string, settle time.Duration) (task.Task, []task.Event, error) {
	deadline := time.Now().Add(settle)
	for {
		var t task.Task
		var h []task.Event
		err := patiently(func() (err error) {
			t, h, err = st.TaskWithHistory(ctx, id)
			return err
		})
		if err != nil && !errors.Is(err, team.ErrNotFound) {
			return t, h, fmt.Errorf("read: %w", err)
		}
		if err == nil && t.Version == len(h) {
			return t, h, nil
		}
		if time.Now().After(deadline) {
			if err != nil {
				return t, h, fmt.Errorf("read: %w", err)
			}
			return t, h, fmt.Errorf("version %d but %d history lines after %s", t.Version, len(h), settle)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// raceLine sums the races up: per tool, how many and how their calls ended.
func (l *ledger) raceLine() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	type sum struct{ races, winners, lost, other int }
	by := map[string]*sum{}
	var tools []string
	for _, r := range l.races {
		if by[r.Tool] == nil {
			by[r.Tool] = &sum{}
			tools = append(tools, r.Tool)
		}
		s := by[r.Tool]
		s.races++
		s.winners += r.Winners
		s.lost += r.Lost
		s.other += r.Other
	}
	slices.Sort(tools)
	parts := make([]string, len(tools))
	for i, t := range tools {
		s := by[t]
		parts[i] = fmt.Sprintf("%d × %d %s: %d won, %d refused as stale, %d other", s.races, racers, t, s.winners, s.lost, s.other)
	}
	return strings.Join(parts, "; ")
}

// drainTime is how long the checks wait for a stack still busy with the
// calls the run left behind (the local emulator answers one request at a time).
const drainTime = 5 * time.Minute

// patiently runs a read, trying again while the database is only busy.
func patiently(read func() error) error {
	deadline := time.Now().Add(drainTime)
	for {
		err := read()
		if err == nil || (!errors.Is(err, team.ErrUnavailable) && !errors.Is(err, team.ErrThrottled)) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(time.Second)
	}
}
