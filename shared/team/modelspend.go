// The team's model spend (ModelSpend): it records the usage a runner
// reports for a run (bound to the run's token), tells whether an agent may
// start a new run under its owner's daily cap, asks the owner once a day
// when the cap is reached, and carries out the owner's decisions (set a
// cap, raise it for the day, leave it). The rules are shared/domain/modelspend's.

package team

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/domain/audit"
	"github.com/useprickle/prickle/shared/domain/budget"
	"github.com/useprickle/prickle/shared/domain/event"
	"github.com/useprickle/prickle/shared/domain/modelspend"
	"github.com/useprickle/prickle/shared/domain/task"
)

// ModelSpendStore is what model spend keeps; *store.ModelSpendStore is one.
type ModelSpendStore interface {
	Task(ctx context.Context, id string) (task.Task, error)
	Agent(ctx context.Context, id string) (Agent, error)
	// RecordRun stores a run once, with its ADDs and audit entry; false when it was stored before.
	RecordRun(ctx context.Context, r modelspend.Run) (bool, error)
	AgentsSpend(ctx context.Context, agents []string, day, month string) ([]modelspend.AgentSpend, error)
	// PutModelCap stores a cap; PerDay 0 is none.
	PutModelCap(ctx context.Context, c modelspend.Cap) error
	// MarkCapAsked is true only for the first mark of (agent, day).
	MarkCapAsked(ctx context.Context, agent, day string, at time.Time) (bool, error)
	UnmarkCapAsked(ctx context.Context, agent, day string, at time.Time) error
	// DecideCap records a decision once; ErrConflict when the day has one.
	DecideCap(ctx context.Context, agent, day, decision, by string, at time.Time, raisedTo budget.Micros) error
	AppendAudit(ctx context.Context, entries ...audit.Entry) error
}

// ModelSpend carries out model spend. Events receives the ask of a cap
// reached (notify sends it); Now is the clock.
type ModelSpend struct {
	Store  ModelSpendStore
	Events event.Publisher
	Now    func() time.Time
	Log    *slog.Logger
}

// NewModelSpend builds a ModelSpend on the real clock.
func NewModelSpend(s ModelSpendStore, events event.Publisher, log *slog.Logger) *ModelSpend {
	if log == nil {
		log = slog.Default()
	}
	return &ModelSpend{Store: s, Events: events, Now: time.Now, Log: log}
}

func (s *ModelSpend) now() time.Time { return s.Now().UTC().Truncate(time.Millisecond) }

// Record stores what a run reported, bound to its run token (the caller):
// its agent, task and run come from the token, its project from the task.
// A run reported before counts once (recorded false). Then, if the day's
// spend reached the agent's cap, the owner is asked (once a day).
func (s *ModelSpend) Record(ctx context.Context, run identity.Caller, r modelspend.Report) (bool, error) {
	if run.Kind != identity.KindRun || run.TaskID == "" || run.RunID == "" {
		return false, fmt.Errorf("record spend: a report is bound to a run token, not a %s token", run.Kind)
	}
	t, err := s.Store.Task(ctx, run.TaskID)
	if err != nil {
		return false, fmt.Errorf("record spend of run %s: task %s: %w", run.RunID, run.TaskID, err)
	}
	recorded, err := s.Store.RecordRun(ctx, modelspend.NewRun(run.Agent, t.Project, run.TaskID, run.RunID, r, s.now()))
	if err != nil {
		return false, fmt.Errorf("record spend of run %s: %w", run.RunID, err)
	}
	if _, err := s.Gate(ctx, run.Agent); err != nil {
		s.Log.ErrorContext(ctx, "model cap check after a run's report failed", "agent", run.Agent, "run", run.RunID, "error", err.Error())
	}
	return recorded, nil
}

// Spend reads an agent's cap, day and month as they stand now.
func (s *ModelSpend) Spend(ctx context.Context, agent string) (modelspend.AgentSpend, error) {
	now := s.now()
	got, err := s.Store.AgentsSpend(ctx, []string{agent}, modelspend.Day(now), modelspend.Month(now))
	if err != nil {
		return modelspend.AgentSpend{}, err
	}
	return got[0], nil
}

// Gate is the agent's cap now: Over means no new run of the agent starts.
// Over and not yet asked today, the owner is asked now; an ask that could
// not be handed on is taken back (so the next check asks again) and
// logged, never turned into an error of the check.
func (s *ModelSpend) Gate(ctx context.Context, agent string) (modelspend.Status, error) {
	a, err := s.Spend(ctx, agent)
	if err != nil {
		return modelspend.Status{}, fmt.Errorf("model cap of %s: %w", agent, err)
	}
	st := a.Status()
	if st.Ask() {
		s.ask(ctx, st)
	}
	return st, nil
}

// ask marks the day asked (once) and hands the ask to notify.
func (s *ModelSpend) ask(ctx context.Context, st modelspend.Status) {
	at := s.now()
	first, err := s.Store.MarkCapAsked(ctx, st.Agent, st.Day.Day, at)
	if err != nil || !first {
		if err != nil {
			s.Log.ErrorContext(ctx, "model cap ask not marked", "agent", st.Agent, "error", err.Error())
		}
		return
	}
	r := modelspend.ReachedOf(st)
	err = s.Events.Publish(ctx, event.ForCapReached(r, at))
	if err == nil {
		s.Log.InfoContext(ctx, "model cap reached: owner asked", "agent", st.Agent, "day", st.Day.Day, "spent", r.Spent.String(), "limit", r.Limit.String())
		return
	}
	s.Log.ErrorContext(ctx, "model cap ask not published; the next check asks again", "agent", st.Agent, "error", err.Error())
	if uerr := s.Store.UnmarkCapAsked(context.WithoutCancel(ctx), st.Agent, st.Day.Day, at); uerr != nil {
		s.Log.ErrorContext(ctx, "model cap ask not unmarked", "agent", st.Agent, "error", uerr.Error())
	}
}

// ownAgent loads an agent the owner answers for, in project (any of its
// projects when project is empty); anything else is refused as unknown.
func (s *ModelSpend) ownAgent(ctx context.Context, owner, project, agent string) (Agent, error) {
	if o, _, _ := strings.Cut(agent, "/"); o != owner || owner == "" {
		return Agent{}, task.Refusef("%s is not one of %s's agents", agent, owner)
	}
	a, err := s.Store.Agent(ctx, agent)
	if errors.Is(err, ErrNotFound) || (err == nil && project != "" && !slices.Contains(a.Projects, project)) {
		return Agent{}, task.Refusef("no agent %s of %s in %s", agent, owner, cmp.Or(project, "any project"))
	}
	if err != nil {
		return Agent{}, fmt.Errorf("load agent %s: %w", agent, err)
	}
	return a, nil
}

// audit records an owner's cap decision in the trail of every project of the agent.
func (s *ModelSpend) audit(ctx context.Context, a Agent, e audit.Entry) {
	entries := make([]audit.Entry, 0, len(a.Projects))
	for _, p := range a.Projects {
		e.Project = p
		entries = append(entries, e)
	}
	if err := s.Store.AppendAudit(ctx, entries...); err != nil {
		s.Log.ErrorContext(ctx, "audit of a model cap decision failed", "agent", a.ID, "action", e.Action, "error", err.Error())
	}
}

// SetCap sets (perDay > 0) or removes (perDay 0) the daily cap of one of
// the owner's agents in project. A cap set above the day's spend lets the
// agent's waiting work start at once; one at or below it holds it.
func (s *ModelSpend) SetCap(ctx context.Context, owner, project, agent string, perDay budget.Micros, via string) error {
	a, err := s.ownAgent(ctx, owner, project, agent)
	if err != nil {
		return err
	}
	now := s.now()
	if perDay < 0 || perDay > modelspend.MaxCapUSD*budget.Scale {
		return task.Refusef("a cap is at most %d %s a day", modelspend.MaxCapUSD, modelspend.Unit)
	}
	detail := fmt.Sprintf("daily model-spend cap of %s: %s %s", agent, perDay, modelspend.Unit)
	if perDay == 0 {
		detail = fmt.Sprintf("no daily model-spend cap for %s", agent)
	}
	if err := s.Store.PutModelCap(ctx, modelspend.Cap{Agent: agent, PerDay: perDay, SetBy: owner, SetAt: now}); err != nil {
		return fmt.Errorf("set the cap of %s: %w", agent, err)
	}
	s.audit(ctx, a, audit.Entry{At: now, Action: audit.ModelCapSet, Actor: "owner:" + owner, Via: via, Detail: detail,
		Key: "modelcap#" + agent + "#" + now.Format(time.RFC3339Nano)})
	return nil
}

// Decide carries out the owner's answer to a cap reached on day: raise
// gives the agent another cap's worth for the rest of the day (its waiting
// work starts at once), leave keeps it waiting until the next UTC day. Each
// day's ask is decided once; a second decision, another day's link, or
// another owner is refused.
func (s *ModelSpend) Decide(ctx context.Context, owner, agent, day string, raise bool, via string) (modelspend.Status, error) {
	a, err := s.ownAgent(ctx, owner, "", agent)
	if err != nil {
		return modelspend.Status{}, err
	}
	spend, err := s.Spend(ctx, agent)
	if err != nil {
		return modelspend.Status{}, fmt.Errorf("decide the cap of %s: %w", agent, err)
	}
	st := spend.Status()
	switch {
	case st.Day.Day != day:
		return st, task.Refusef("this asked about %s's cap on %s; a new UTC day has begun, and the cap applies afresh", agent, day)
	case st.Day.Decision != "":
		return st, task.Refusef("already decided by %s at %s: %s", st.Day.DecidedBy, capStamp(st.Day.DecidedAt), describeCapDecision(st.Day.Decision, st.Day.RaisedTo))
	case !st.Capped:
		return st, task.Refusef("%s has no daily model-spend cap now, so there is nothing to raise", agent)
	}
	decision, raisedTo := modelspend.Left, budget.Micros(0)
	if raise {
		decision, raisedTo = modelspend.Raised, st.RaisedLimit()
	}
	now := s.now()
	err = s.Store.DecideCap(ctx, agent, day, decision, owner, now, raisedTo)
	if errors.Is(err, ErrConflict) {
		return st, task.Refusef("already decided for %s today", agent)
	}
	if err != nil {
		return st, fmt.Errorf("decide the cap of %s: %w", agent, err)
	}
	action := audit.ModelCapLeft
	if raise {
		action = audit.ModelCapRaised
	}
	s.audit(ctx, a, audit.Entry{At: now, Action: action, Actor: "owner:" + owner, Via: via,
		Detail: fmt.Sprintf("%s's model spend on %s (%s %s spent): %s", agent, day, st.Day.Cost, modelspend.Unit, describeCapDecision(decision, raisedTo)),
		Key:    "modelcap#" + agent + "#" + day + "#decided"})
	st.Day.Decision, st.Day.DecidedBy, st.Day.DecidedAt, st.Day.RaisedTo = decision, owner, &now, raisedTo
	c := st.Cap
	return modelspend.StatusOf(agent, &c, st.Day), nil
}

// describe says a decision in words.
func describeCapDecision(decision string, raisedTo budget.Micros) string {
	if decision == modelspend.Raised {
		return fmt.Sprintf("the cap raised for the day to %s %s", raisedTo, modelspend.Unit)
	}
	return "the cap left as it is until the next UTC day"
}

func capStamp(t *time.Time) string {
	if t == nil {
		return "an unknown time"
	}
	return t.UTC().Format(time.RFC3339)
}
