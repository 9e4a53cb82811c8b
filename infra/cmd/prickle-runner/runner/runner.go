package runner

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/useprickle/prickle/shared/domain/wakeup"
)

// RememberFor is how long the runner remembers a delivery it took, so a
// replay (or a pull redelivery) is never run twice; it is well past
// wakeup.ReplayWindow, after which a replayed webhook fails verification anyway.
const RememberFor = time.Hour

// Runner starts one run per wake-up: at most Concurrency at once, at most
// one per task (a later wake-up for a task waits for its running run), each
// with a log file, a timeout that ends its process group, and a checkpoint
// when it ends without one of its own. Each task's runs continue one
// conversation (its Session), and a wake-up is finished with its source
// (Hold.Done) only once a run of it has ended by itself: one stopped with
// the runner, or lost with it, comes back and resumes.
type Runner struct {
	Config     Config
	Tasks      Tasks
	AgentToken string
	// Env is the environment every run starts with (before the run's own PRICKLE_* values).
	Env []string
	// Self is this runner's executable (the claude template's hook); New sets it.
	Self string
	// Out gets one line per wake-up and per run start and end.
	Out *slog.Logger
	// CallTimeout bounds each call to Prickle (default 1 minute).
	CallTimeout time.Duration
	// OnHeld is called when Prickle held a delivered run for its agent's
	// model-spend cap (webhook mode's drain claims it back); nil: nobody.
	OnHeld func()

	mu      sync.Mutex
	ctx     context.Context
	sem     chan struct{}
	seen    map[string]*delivery
	running map[string]bool
	waiting map[string][]*delivery
	// live is the process of a task's running wakeable run.
	live map[string]*os.Process
	wg   sync.WaitGroup
}

// Hold settles a wake-up with its source. Done: a run of it ended by itself,
// so it is finished and never delivered again. Keep: it still waits or runs,
// so it is not delivered again meanwhile; Next says when Keep is due (zero:
// never). A wake-up that is never Done comes back: a pull claim after its
// visibility timeout, a webhook delivery from the runner's journal when the
// runner starts again.
type Hold interface {
	Done(ctx context.Context) error
	Keep(ctx context.Context) error
	Next() time.Time
}

type delivery struct {
	key      string
	w        wakeup.Payload
	via      string
	hold     Hold
	finished bool
	at       time.Time
}

// New builds a Runner; Start must be called before Offer.
func New(cfg Config, tasks Tasks, agentToken string, out *slog.Logger) *Runner {
	self, _ := os.Executable()
	return &Runner{Config: cfg, Tasks: tasks, AgentToken: agentToken, Out: out, Env: RunBaseEnv(cfg), Self: self}
}

// RunBaseEnv is the runner's environment without what a run must not see:
// the agent token's and webhook secret's variables and stale PRICKLE_* values.
func RunBaseEnv(cfg Config) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "PRICKLE_") || (cfg.AgentTokenEnv != "" && name == cfg.AgentTokenEnv) ||
			(cfg.Webhook.SecretEnv != "" && name == cfg.Webhook.SecretEnv) {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// Start readies the runner; runs are stopped (SIGTERM, then SIGKILL after
// the grace period) when ctx ends. Wait returns when they all have.
func (r *Runner) Start(ctx context.Context) error {
	if err := os.MkdirAll(r.Config.LogDir, 0o700); err != nil {
		return fmt.Errorf("log dir: %w", err)
	}
	if err := os.MkdirAll(r.Config.StateDir, 0o700); err != nil {
		return fmt.Errorf("state dir: %w", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ctx = ctx
	r.sem = make(chan struct{}, r.Config.Concurrency)
	r.seen = map[string]*delivery{}
	r.running = map[string]bool{}
	r.waiting = map[string][]*delivery{}
	r.live = map[string]*os.Process{}
	go r.keep(ctx)
	return nil
}

// Wait blocks until every run the runner started has ended and been recorded.
func (r *Runner) Wait() { r.wg.Wait() }

// keepEvery is how often the runner looks for holds whose Keep is due.
const keepEvery = 500 * time.Millisecond

// keep renews the holds of the wake-ups that wait or run, until ctx ends.
func (r *Runner) keep(ctx context.Context) {
	t := time.NewTicker(keepEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			for _, d := range r.due(now) {
				call, cancel := context.WithTimeout(ctx, r.callTimeout())
				if err := d.hold.Keep(call); err != nil && ctx.Err() == nil {
					r.Out.Warn("wake-up not kept: it may be delivered again", "task", d.w.TaskID, "run", d.w.RunID, "delivery", d.key, "error", err.Error())
				}
				cancel()
			}
		}
	}
}

// due lists the unfinished deliveries whose hold is due to be kept.
func (r *Runner) due(now time.Time) []*delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*delivery
	for _, d := range r.seen {
		if d.hold == nil || d.finished {
			continue
		}
		if next := d.hold.Next(); !next.IsZero() && !now.Before(next) {
			out = append(out, d)
		}
	}
	return out
}

// Offered says what became of a wake-up offered to the runner.
type Offered int

// What Offer did with a wake-up.
const (
	Taken    Offered = iota // new: its run starts now or after its task's running run
	Repeated                // already taken (the same run id): not run again
	Stopping                // the runner is stopping: not taken, the sender should retry later
)

// Offer takes a wake-up from via ("webhook", "pull" or "journal"); key
// names the delivery: its run id for a webhook, the wake-up's id for a claim
// (a claim redelivered after the visibility timeout carries a new run). A
// delivery already taken is not run again: its new hold (a redelivered
// claim) replaces the old one, and is Done at once if its run has ended.
func (r *Runner) Offer(key string, w wakeup.Payload, via string, hold Hold) Offered {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	for id, d := range r.seen {
		if now.Sub(d.at) > RememberFor && d.finished {
			delete(r.seen, id)
		}
	}
	if d, ok := r.seen[key]; ok {
		r.Out.Info("wake-up repeated; not run again", "task", w.TaskID, "run", w.RunID, "first_run", d.w.RunID, "reason", w.Reason, "via", via, "delivery", key)
		if hold != nil {
			if d.finished {
				go r.done(hold, w)
			} else {
				d.hold = hold
			}
		}
		return Repeated
	}
	if r.ctx.Err() != nil {
		r.Out.Warn("runner is stopping; wake-up not taken", "task", w.TaskID, "run", w.RunID, "via", via)
		return Stopping
	}
	d := &delivery{key: key, w: w, via: via, hold: hold, at: now}
	r.seen[key] = d
	r.Out.Info("wake-up", "task", w.TaskID, "run", w.RunID, "reason", w.Reason, "resumes_run", w.ResumesRun, "via", via, "delivery", key)
	if r.running[w.TaskID] {
		r.Out.Info("run waits: its task has a run going", "task", w.TaskID, "run", w.RunID)
		r.waiting[w.TaskID] = append(r.waiting[w.TaskID], d)
		if p := r.live[w.TaskID]; p != nil {
			// A run waiting on its owner hears of the decision at once.
			if err := p.Signal(syscall.SIGUSR1); err == nil {
				r.Out.Info("running run told of the wake-up", "task", w.TaskID, "run", w.RunID)
			}
		}
		return Taken
	}
	r.launch(d)
	return Taken
}

// launch starts d's run; r.mu is held.
func (r *Runner) launch(d *delivery) {
	r.running[d.w.TaskID] = true
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		r.execute(d)
		r.mu.Lock()
		defer r.mu.Unlock()
		delete(r.running, d.w.TaskID)
		if q := r.waiting[d.w.TaskID]; len(q) > 0 {
			next := q[0]
			if len(q) == 1 {
				delete(r.waiting, d.w.TaskID)
			} else {
				r.waiting[d.w.TaskID] = q[1:]
			}
			if r.ctx.Err() == nil {
				r.launch(next)
			}
		}
	}()
}

// done tells a wake-up's source that it is finished.
func (r *Runner) done(h Hold, w wakeup.Payload) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.ctx), r.callTimeout())
	defer cancel()
	if err := h.Done(ctx); err != nil {
		r.Out.Warn("wake-up not finished with its source: it may come back", "task", w.TaskID, "run", w.RunID, "error", err.Error())
	}
}

func (r *Runner) callTimeout() time.Duration {
	if r.CallTimeout > 0 {
		return r.CallTimeout
	}
	return time.Minute
}

// forget drops a delivery whose run never started, so a redelivered claim can start it.
func (r *Runner) forget(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.seen, key)
}

// Free is how many more runs could start now (what a pull may claim).
func (r *Runner) Free() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	queued := 0
	for _, q := range r.waiting {
		queued += len(q)
	}
	return r.Config.Concurrency - len(r.running) - queued
}

// ViaJournal is how a webhook delivery replayed from the journal is offered.
const ViaJournal = "journal"

// finish marks a delivery done and tells its source.
func (r *Runner) finish(d *delivery) {
	r.mu.Lock()
	d.finished = true
	h := d.hold
	r.mu.Unlock()
	if h != nil {
		r.done(h, d.w)
	}
}
