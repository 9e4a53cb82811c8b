// Package wakeup wakes agents' runs: when a task is routed to an agent, a
// result comes back to its requester, or an owner decides a step, Prickle
// mints a run token and POSTs a signed request to the agent's registered
// webhook, retrying and recording every attempt so no wake-up is lost
// silently. Receivers check requests with shared/domain/wakeup.Verify.
package wakeup

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/useprickle/prickle/shared/domain/event"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/domain/wakeup"
	"github.com/useprickle/prickle/shared/kit/wait"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/mint"
)

// Hooks is what the waker needs from storage: the agents' hooks, the
// record of attempts, and the wake-ups stored for agents with no hook. The
// store implements it.
type Hooks interface {
	// WakeHook returns the agent's hook, or an error wrapping team.ErrNotFound.
	WakeHook(ctx context.Context, agent string) (wakeup.Hook, error)
	RecordWakeAttempt(ctx context.Context, a wakeup.Attempt) error
	WakeAttempts(ctx context.Context, taskID string) ([]wakeup.Attempt, error)
	// PutPendingWakeup stores a wake-up for pull; storing the same one again changes nothing.
	PutPendingWakeup(ctx context.Context, p wakeup.Pending) error
}

// RunStarter mints a run token bound to (agent, task, run), recording who
// minted it; *mint.Tokens is one.
type RunStarter interface {
	StartRun(ctx context.Context, by mint.Minter, agentID, taskID, resumes string) (mint.Run, error)
}

// Waker is the wakeup function's logic: it turns events into signed wake
// requests to the agents concerned.
type Waker struct {
	Hooks Hooks
	Runs  RunStarter
	HTTP  *http.Client
	Now   func() time.Time
	// Sleep waits between attempts; tests inject one that does not.
	Sleep func(ctx context.Context, d time.Duration) error
	// Attempts bounds the POSTs per wake-up (default 4); Backoff is the
	// first wait between them, doubling after each (default 500ms).
	Attempts int
	Backoff  time.Duration
	Log      *slog.Logger
}

// NewWaker builds a Waker with a 10-second HTTP timeout, 4 attempts and real sleeps.
func NewWaker(hooks Hooks, runs RunStarter) *Waker {
	return &Waker{
		Hooks: hooks, Runs: runs, HTTP: &http.Client{Timeout: 10 * time.Second},
		Now: time.Now, Sleep: wait.For, Attempts: 4, Backoff: 500 * time.Millisecond, Log: slog.Default(),
	}
}

// recipient is who to wake for an event, and why.
type recipient struct {
	agent, taskID, reason, resumes string
}

// target decides whom an event wakes; ok false means it wakes no one.
func target(e event.Event) (w recipient, ok bool, err error) {
	needTask := func() error {
		if e.Task == nil {
			return fmt.Errorf("event %s (%s) carries no task", e.ID, e.Type)
		}
		return nil
	}
	switch e.Type {
	case event.TaskRouted:
		if err := needTask(); err != nil {
			return w, false, err
		}
		return recipient{agent: e.Task.Assignee, taskID: e.Task.ID, reason: wakeup.ReasonTaskRouted}, true, nil
	case event.ResultReturned:
		if err := needTask(); err != nil {
			return w, false, err
		}
		return recipient{agent: e.Task.Requester, taskID: e.Task.ID, reason: wakeup.ReasonResultReturned}, true, nil
	case event.ResultDecided:
		if err := needTask(); err != nil {
			return w, false, err
		}
		if e.Task.State != task.Working { // approved: completed, nothing to resume
			return w, false, nil
		}
		return recipient{agent: e.Task.Assignee, taskID: e.Task.ID, reason: wakeup.ReasonResultRefused}, true, nil
	case event.StepDecided:
		if e.Step == nil {
			return w, false, fmt.Errorf("event %s (%s) carries no step", e.ID, e.Type)
		}
		return recipient{agent: e.Step.Agent, taskID: e.Step.TaskID, reason: wakeup.ReasonStepDecided, resumes: e.Step.RunID}, true, nil
	}
	return w, false, nil
}

// Handle wakes the agent an event concerns: Task Routed → the assignee,
// Result Returned → the requester, Step Decided → the step's agent resuming
// the step's run, Result Decided with a refusal → the assignee. An agent
// without a hook is in pull mode: the wake-up is stored for its runner to
// claim (POST /runner/claim mints the run token then). Tasks that closed
// meanwhile are skipped. An error
// means every attempt failed: EventBridge retries the event later and its
// dead-letter queue keeps what never got through; the task itself is stored
// and unaffected. A wake-up already delivered for this event is not repeated.
func (w *Waker) Handle(ctx context.Context, e event.Event) error {
	up, ok, err := target(e)
	if err != nil {
		return fmt.Errorf("wake: %w", err)
	}
	if !ok {
		return nil
	}
	log := w.log().With("event", e.ID, "agent", up.agent, "task", up.taskID, "reason", up.reason)
	hook, err := w.Hooks.WakeHook(ctx, up.agent)
	if errors.Is(err, team.ErrNotFound) {
		at := e.At
		if at.IsZero() {
			at = w.now()
		}
		p := wakeup.Pending{ID: wakeup.PendingID(e.ID, up.agent, at), Agent: up.agent, TaskID: up.taskID, Reason: up.reason, ResumesRun: up.resumes, EventID: e.ID, CreatedAt: at.UTC()}
		if err := w.Hooks.PutPendingWakeup(ctx, p); err != nil {
			return fmt.Errorf("wake %s for task %s: store for pull: %w", up.agent, up.taskID, err)
		}
		log.InfoContext(ctx, "agent has no wake hook; wake-up stored for pull", "wakeup", p.ID)
		return nil
	}
	if err != nil {
		return fmt.Errorf("wake %s: load hook: %w", up.agent, err)
	}
	previous, err := w.Hooks.WakeAttempts(ctx, up.taskID)
	if err != nil {
		return fmt.Errorf("wake %s for task %s: read attempts: %w", up.agent, up.taskID, err)
	}
	for _, a := range previous {
		if a.EventID == e.ID && a.Agent == up.agent && a.Delivered() {
			log.InfoContext(ctx, "wake-up for this event already delivered; not repeated", "run", a.RunID)
			return nil
		}
	}
	run, err := w.Runs.StartRun(ctx, mint.ByWebhook(e.ID, up.reason), up.agent, up.taskID, up.resumes)
	if errors.Is(err, mint.ErrNoRun) {
		log.InfoContext(ctx, "no run to wake", "why", err.Error())
		return nil
	}
	if err != nil {
		return fmt.Errorf("wake %s for task %s: start run: %w", up.agent, up.taskID, err)
	}
	body, err := json.Marshal(wakeup.Payload{TaskID: up.taskID, RunID: run.RunID, RunToken: run.RunToken, Reason: up.reason, ResumesRun: up.resumes})
	if err != nil {
		return fmt.Errorf("wake %s: encode payload: %w", up.agent, err)
	}
	return w.post(ctx, log, hook, body, wakeup.Attempt{EventID: e.ID, RunID: run.RunID, Agent: up.agent, TaskID: up.taskID, Reason: up.reason})
}

func (w *Waker) now() time.Time {
	if w.Now == nil {
		return time.Now()
	}
	return w.Now()
}

func (w *Waker) log() *slog.Logger {
	if w.Log == nil {
		return slog.Default()
	}
	return w.Log
}

// post sends the signed request until the receiver takes it, retrying
// network errors, 5xx and 429 with doubling waits, and records each attempt.
func (w *Waker) post(ctx context.Context, log *slog.Logger, hook wakeup.Hook, body []byte, base wakeup.Attempt) error {
	attempts := max(w.Attempts, 1)
	backoff := w.Backoff
	sleep := w.Sleep
	if sleep == nil {
		sleep = wait.For
	}
	now := w.now
	var last string
	for n := 1; n <= attempts; n++ {
		at := now().UTC()
		code, err := w.send(ctx, hook, body, at)
		a := base
		a.Attempt, a.At, a.StatusCode = n, at, code
		if err != nil {
			a.Error = err.Error()
		}
		if rerr := w.Hooks.RecordWakeAttempt(ctx, a); rerr != nil {
			log.ErrorContext(ctx, "record wake attempt failed", "attempt", n, "error", rerr.Error())
		}
		switch {
		case err == nil && a.Delivered():
			log.InfoContext(ctx, "agent woken", "run", a.RunID, "attempt", n, "status", code)
			return nil
		case err == nil && code != http.StatusTooManyRequests && code < 500:
			// The receiver refused it (bad signature, unknown path): retrying will not help.
			log.ErrorContext(ctx, "wake refused by the receiver; not retried", "run", a.RunID, "attempt", n, "status", code)
			return nil
		case err != nil:
			last = err.Error()
		default:
			last = "HTTP " + strconv.Itoa(code)
		}
		log.WarnContext(ctx, "wake attempt failed", "run", a.RunID, "attempt", n, "status", code, "error", last)
		if n == attempts {
			break
		}
		if err := sleep(ctx, backoff); err != nil {
			return fmt.Errorf("wake %s for task %s: gave up after %d attempts (%s): %w", base.Agent, base.TaskID, n, last, err)
		}
		backoff *= 2
	}
	return fmt.Errorf("wake %s for task %s: %d attempts failed, last: %s", base.Agent, base.TaskID, attempts, last)
}

// send makes one signed POST and returns the status code. Errors never
// include the URL (which may carry credentials of the receiver's own).
func (w *Waker) send(ctx context.Context, hook wakeup.Hook, body []byte, at time.Time) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, hook.URL, bytes.NewReader(body))
	if err != nil {
		return 0, errors.New("bad wake URL")
	}
	ts := at.Unix()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Prickle-Wake/1")
	req.Header.Set(wakeup.TimestampHeader, strconv.FormatInt(ts, 10))
	req.Header.Set(wakeup.SignatureHeader, wakeup.Sign(hook.Secret, ts, body))
	client := w.HTTP
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			return 0, uerr.Err
		}
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, nil
}
