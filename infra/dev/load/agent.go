package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/useprickle/prickle/shared/domain/task"
)

// staleState matches the domain's refusal of a tool in the wrong state.
var staleState = regexp.MustCompile(`^task \S+ is [a-z]+; [a-z_]+ needs `)

// racePrefix marks the tasks the racers play on; the team's mix leaves them alone.
const racePrefix = "Race: "

// agent is one simulated agent: its id, token and team.
type agent struct {
	id    string
	token string
	team  *teamOf
}

// teamOf is a project and the agents in it.
type teamOf struct {
	project string
	agents  []*agent
}

// move is a successful move the load command saw: what the history must hold.
type move struct {
	Action, By string
	To         task.State
}

// ledger records, per task, the moves that succeeded and how many calls
// ended without a known outcome (those may or may not have landed).
type ledger struct {
	mu      sync.Mutex
	moves   map[string][]move
	unknown map[string]int
	races   []*race
	// unknownHandOffs counts, per project, hand-offs without a known outcome:
	// tasks that may exist without the load having seen them created.
	unknownHandOffs map[string]int
}

func newLedger() *ledger {
	return &ledger{moves: map[string][]move{}, unknown: map[string]int{}, unknownHandOffs: map[string]int{}}
}

func (l *ledger) record(id string, a answer, m move) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if id == "" {
		return
	}
	switch {
	case a.kind == kindOK:
		l.moves[id] = append(l.moves[id], m)
	case outcomeUnknown(a.kind):
		l.unknown[id]++
	}
}

// race is a set of calls that raced on one task: exactly one may win.
type race struct {
	TaskID  string
	Tool    string
	Calls   int
	Winners int
	Lost    int // refused as stale
	Other   int // any other answer
}

// sim runs the agents and the racers against one stack.
type sim struct {
	client *mcpClient
	stats  *stats
	ledger *ledger
	think  time.Duration
}

// act sends one tool call, times it and records a move it made.
func (s *sim) act(ctx context.Context, ag *agent, tool string, args map[string]any, taskID string, m move) answer {
	// A call started is let finish after the run ends, so its outcome is known.
	a := s.client.call(context.WithoutCancel(ctx), ag.token, tool, args)
	s.stats.add(tool, a)
	switch {
	case m.Action == "hand_off" && a.kind == kindOK:
		s.ledger.record(taskIDOf(a.content), a, m)
	case m.Action == "hand_off" && outcomeUnknown(a.kind):
		s.ledger.mu.Lock()
		s.ledger.unknownHandOffs[ag.team.project]++
		s.ledger.mu.Unlock()
	case m.Action != "":
		s.ledger.record(taskID, a, m)
	}
	return a
}

func taskIDOf(content json.RawMessage) string {
	var out struct {
		Task task.Task `json:"task"`
	}
	_ = json.Unmarshal(content, &out)
	return out.Task.ID
}

func (s *sim) pause(ctx context.Context, r *rand.Rand) bool {
	d := s.think/2 + time.Duration(r.Int64N(int64(s.think)+1))
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// runAgent plays one agent of a real team until ctx ends: it reads the room,
// then moves one of its tasks on as its role allows (accept or now and then
// decline what it was handed, checkpoint, return a result; review what it
// asked for, now and then cancel), or hands work to a teammate, updates its
// pulse or reads a task.
func (s *sim) runAgent(ctx context.Context, ag *agent, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 7))
	for s.pause(ctx, r) {
		a := s.act(ctx, ag, "read_room", map[string]any{"project": ag.team.project, "role": "any", "states": []string{"routed", "accepted", "working", "verifying"}, "limit": 20}, "", move{})
		if a.kind != kindOK {
			continue
		}
		var room struct {
			Tasks []task.Task `json:"tasks"`
		}
		_ = json.Unmarshal(a.content, &room)
		var mine, asked []task.Task
		for _, t := range room.Tasks {
			switch {
			case strings.HasPrefix(t.Packet.Task, racePrefix):
			case t.Assignee == ag.id:
				mine = append(mine, t)
			case t.Requester == ag.id:
				asked = append(asked, t)
			}
		}
		if !s.pause(ctx, r) {
			return
		}
		roll := r.IntN(100)
		switch {
		case roll < 45 && len(mine) > 0:
			s.work(ctx, ag, r, mine[r.IntN(len(mine))])
		case roll < 70 && len(asked) > 0:
			s.review(ctx, ag, r, asked[r.IntN(len(asked))])
		case roll < 85 && len(asked) < 3:
			to := ag.team.agents[r.IntN(len(ag.team.agents))]
			if to == ag {
				continue
			}
			s.act(ctx, ag, "hand_off_task", map[string]any{"project": ag.team.project, "assignee": to.id, "packet": map[string]any{
				"task": fmt.Sprintf("Draft copy block %d for the landing page.", r.IntN(1000)), "deliverable_type": "answer",
				"acceptance_criteria": []string{"At most 12 words."}}}, "", move{Action: "hand_off", By: ag.id, To: task.Routed})
		case roll < 93:
			args := map[string]any{"project": ag.team.project, "doing": fmt.Sprintf("Working through my queue (%d tasks).", len(mine))}
			if len(mine) > 0 {
				args["task_id"] = mine[0].ID
			}
			s.act(ctx, ag, "update_pulse", args, "", move{})
		case len(room.Tasks) > 0:
			t := room.Tasks[r.IntN(len(room.Tasks))]
			s.act(ctx, ag, "get_task", map[string]any{"task_id": t.ID}, "", move{})
		}
	}
}

// work moves on a task the agent was handed.
func (s *sim) work(ctx context.Context, ag *agent, r *rand.Rand, t task.Task) {
	switch t.State {
	case task.Routed:
		if r.IntN(100) < 10 {
			s.act(ctx, ag, "decline_task", map[string]any{"task_id": t.ID, "reason": "Not my area this week."}, t.ID, move{"decline", ag.id, task.Rejected})
			return
		}
		s.act(ctx, ag, "accept_task", map[string]any{"task_id": t.ID}, t.ID, move{"accept", ag.id, task.Accepted})
	case task.Accepted, task.Working:
		if r.IntN(100) < 50 {
			s.act(ctx, ag, "save_checkpoint", map[string]any{"task_id": t.ID, "progress": "First draft done.", "next_steps": []string{"Tighten it."}}, t.ID, move{"checkpoint", ag.id, task.Working})
			return
		}
		s.act(ctx, ag, "return_result", map[string]any{"task_id": t.ID, "summary": "Try Prickle today.", "provenance": "agent_generated",
			"evidence": []map[string]any{{"kind": "note", "summary": "Two candidates, this one is shorter."}}}, t.ID, move{"return_result", ag.id, task.Verifying})
	}
}

// review decides on, or cancels, a task the agent asked for.
func (s *sim) review(ctx context.Context, ag *agent, r *rand.Rand, t task.Task) {
	if r.IntN(100) < 5 {
		s.act(ctx, ag, "cancel_task", map[string]any{"task_id": t.ID, "reason": "Plans changed."}, t.ID, move{"cancel", ag.id, task.Cancelled})
		return
	}
	if t.State != task.Verifying {
		return
	}
	if r.IntN(100) < 25 {
		s.act(ctx, ag, "review_result", map[string]any{"task_id": t.ID, "verdict": "rework", "feedback": "Shorter, please."}, t.ID, move{"review_rework", ag.id, task.Working})
		return
	}
	s.act(ctx, ag, "review_result", map[string]any{"task_id": t.ID, "verdict": "accept"}, t.ID, move{"review_accept", ag.id, task.Completed})
}

// racers is how many calls race on one task.
const racers = 4

// runRacer hands tasks from the team's first agent to its second and races
// them: racers accept_task calls at once (the assignee's parallel sessions),
// then a result, then racers review_result calls at once with different
// verdicts. Exactly one call of each race may win.
func (s *sim) runRacer(ctx context.Context, tm *teamOf, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 11))
	req, asg := tm.agents[0], tm.agents[1]
	for s.pause(ctx, r) {
		a := s.act(ctx, req, "hand_off_task", map[string]any{"project": tm.project, "assignee": asg.id, "packet": map[string]any{
			"task": racePrefix + "check the pricing table.", "deliverable_type": "answer", "acceptance_criteria": []string{"Every price matches the sheet."}}},
			"", move{Action: "hand_off", By: req.id, To: task.Routed})
		if a.kind != kindOK {
			continue
		}
		id := taskIDOf(a.content)
		if !s.race(ctx, id, "accept_task", func(int) (*agent, map[string]any, move) {
			return asg, map[string]any{"task_id": id}, move{"accept", asg.id, task.Accepted}
		}) {
			continue
		}
		a = s.act(ctx, asg, "return_result", map[string]any{"task_id": id, "summary": "All prices match.", "provenance": "agent_generated",
			"evidence": []map[string]any{{"kind": "note", "summary": "Checked 12 rows."}}}, id, move{"return_result", asg.id, task.Verifying})
		if a.kind != kindOK {
			continue
		}
		verdicts := []string{"accept", "rework", "reject", "accept"}
		s.race(ctx, id, "review_result", func(i int) (*agent, map[string]any, move) {
			v := verdicts[i%len(verdicts)]
			args := map[string]any{"task_id": id, "verdict": v}
			to := map[string]task.State{"accept": task.Completed, "rework": task.Working, "reject": task.Rejected}[v]
			if v != "accept" {
				args["feedback"] = "One price is off."
			}
			return req, args, move{"review_" + v, req.id, to}
		})
	}
}

// race sends racers calls at once and records how they ended; it reports
// whether one of them won.
func (s *sim) race(ctx context.Context, id, tool string, call func(i int) (*agent, map[string]any, move)) bool {
	rc := &race{TaskID: id, Tool: tool, Calls: racers}
	var wg sync.WaitGroup
	var mu sync.Mutex
	start := make(chan struct{})
	for i := range racers {
		ag, args, m := call(i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			a := s.act(ctx, ag, tool, args, id, m)
			mu.Lock()
			defer mu.Unlock()
			switch a.kind {
			case kindOK:
				rc.Winners++
			case kindStale:
				rc.Lost++
			default:
				rc.Other++
			}
		}()
	}
	close(start)
	wg.Wait()
	s.ledger.mu.Lock()
	s.ledger.races = append(s.ledger.races, rc)
	s.ledger.mu.Unlock()
	return rc.Winners == 1
}
