package wakeup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/useprickle/prickle/shared/domain/event"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/domain/wakeup"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/mint"
)

const secret = "whsec_0123456789abcdef"

type fakeHooks struct {
	mu       sync.Mutex
	hooks    map[string]wakeup.Hook
	attempts []wakeup.Attempt
	pending  map[string]wakeup.Pending
}

func (f *fakeHooks) PutPendingWakeup(_ context.Context, p wakeup.Pending) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.pending == nil {
		f.pending = map[string]wakeup.Pending{}
	}
	if _, ok := f.pending[p.ID]; !ok {
		f.pending[p.ID] = p
	}
	return nil
}

func (f *fakeHooks) WakeHook(_ context.Context, agent string) (wakeup.Hook, error) {
	h, ok := f.hooks[agent]
	if !ok {
		return wakeup.Hook{}, fmt.Errorf("wake hook of %s: %w", agent, team.ErrNotFound)
	}
	return h, nil
}

func (f *fakeHooks) RecordWakeAttempt(_ context.Context, a wakeup.Attempt) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.attempts = append(f.attempts, a)
	return nil
}

func (f *fakeHooks) WakeAttempts(_ context.Context, taskID string) ([]wakeup.Attempt, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []wakeup.Attempt
	for _, a := range f.attempts {
		if a.TaskID == taskID {
			out = append(out, a)
		}
	}
	return out, nil
}

type fakeRuns struct {
	started []mint.Run
	err     error
}

func (f *fakeRuns) StartRun(_ context.Context, _ mint.Minter, agent, taskID, resumes string) (mint.Run, error) {
	if f.err != nil {
		return mint.Run{}, f.err
	}
	r := mint.Run{RunID: fmt.Sprintf("run_%d", len(f.started)+1), RunToken: "prk_r_secret", TaskID: taskID, Agent: agent, ResumesRun: resumes}
	f.started = append(f.started, r)
	return r, nil
}

// receiver is a webhook that answers from a script of status codes (then 204)
// and keeps what it verified.
type receiver struct {
	mu       sync.Mutex
	statuses []int
	got      []wakeup.Payload
	errs     []error
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	body, _ := io.ReadAll(r.Body)
	if err := wakeup.Verify(secret, r.Header.Get(wakeup.TimestampHeader), r.Header.Get(wakeup.SignatureHeader), body, time.Now()); err != nil {
		rc.errs = append(rc.errs, err)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if len(rc.statuses) > 0 {
		code := rc.statuses[0]
		rc.statuses = rc.statuses[1:]
		if code >= 300 {
			w.WriteHeader(code)
			return
		}
	}
	var p wakeup.Payload
	_ = json.Unmarshal(body, &p)
	rc.got = append(rc.got, p)
	w.WriteHeader(http.StatusNoContent)
}

type setup struct {
	waker *Waker
	hooks *fakeHooks
	runs  *fakeRuns
	rc    *receiver
	waits []time.Duration
}

func newSetup(t *testing.T, statuses ...int) *setup {
	t.Helper()
	s := &setup{rc: &receiver{statuses: statuses}, runs: &fakeRuns{}}
	srv := httptest.NewServer(s.rc)
	t.Cleanup(srv.Close)
	s.hooks = &fakeHooks{hooks: map[string]wakeup.Hook{
		"bo/codex":   {Agent: "bo/codex", URL: srv.URL + "/hooks/bo", Secret: secret},
		"ana/claude": {Agent: "ana/claude", URL: srv.URL + "/hooks/ana", Secret: secret},
	}}
	s.waker = NewWaker(s.hooks, s.runs)
	s.waker.Sleep = func(_ context.Context, d time.Duration) error { s.waits = append(s.waits, d); return nil }
	return s
}

// sampleEvent reads the Prickle event out of one of events/*.json.
func sampleEvent(t *testing.T, name string) event.Event {
	t.Helper()
	b, err := os.ReadFile("../../../events/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var cw events.CloudWatchEvent
	if err := json.Unmarshal(b, &cw); err != nil {
		t.Fatal(err)
	}
	var e event.Event
	if err := json.Unmarshal(cw.Detail, &e); err != nil {
		t.Fatal(err)
	}
	return e
}

func TestWhomEachEventWakes(t *testing.T) {
	refused := sampleEvent(t, "result-returned.json")
	refused.Type, refused.ID = event.ResultDecided, "Result Decided:tsk_homepagehero01:7"
	refused.Task.State = task.Working
	tests := []struct {
		name                         string
		e                            event.Event
		agent, task, reason, resumes string
	}{
		{"task routed wakes the assignee", sampleEvent(t, "task-routed.json"), "bo/codex", "tsk_homepagehero01", wakeup.ReasonTaskRouted, ""},
		{"result returned wakes the requester", sampleEvent(t, "result-returned.json"), "ana/claude", "tsk_homepagehero01", wakeup.ReasonResultReturned, ""},
		{"step decided resumes the step's run", sampleEvent(t, "step-decided.json"), "bo/codex", "tsk_homepagehero01", wakeup.ReasonStepDecided, "run_firstrun00001"},
		{"refused result wakes the assignee", refused, "bo/codex", "tsk_homepagehero01", wakeup.ReasonResultRefused, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSetup(t)
			if err := s.waker.Handle(context.Background(), tt.e); err != nil {
				t.Fatal(err)
			}
			if len(s.runs.started) != 1 || s.runs.started[0].Agent != tt.agent || s.runs.started[0].TaskID != tt.task || s.runs.started[0].ResumesRun != tt.resumes {
				t.Fatalf("runs started = %+v", s.runs.started)
			}
			want := wakeup.Payload{TaskID: tt.task, RunID: "run_1", RunToken: "prk_r_secret", Reason: tt.reason, ResumesRun: tt.resumes}
			if len(s.rc.got) != 1 || s.rc.got[0] != want {
				t.Fatalf("receiver got %+v (errors %v), want %+v", s.rc.got, s.rc.errs, want)
			}
			a := s.hooks.attempts
			if len(a) != 1 || a[0].Attempt != 1 || a[0].StatusCode != 204 || a[0].EventID != tt.e.ID || a[0].Reason != tt.reason || a[0].RunID != "run_1" {
				t.Errorf("attempts = %+v", a)
			}
			if len(s.hooks.pending) != 0 {
				t.Errorf("an agent with a webhook got a wake-up stored for pull: %+v", s.hooks.pending)
			}
		})
	}
}

func TestEventsThatWakeNoOne(t *testing.T) {
	approved := sampleEvent(t, "result-returned.json")
	approved.Type = event.ResultDecided
	approved.Task.State = task.Completed
	for _, e := range []event.Event{approved, sampleEvent(t, "task-completed.json"), {ID: "x", Type: event.StepRequested}} {
		s := newSetup(t)
		if err := s.waker.Handle(context.Background(), e); err != nil || len(s.runs.started) != 0 {
			t.Errorf("%s: err %v, runs %v; want nothing done", e.Type, err, s.runs.started)
		}
	}
}

func TestAgentWithoutHookGetsItsWakeupStoredForPull(t *testing.T) {
	refused := sampleEvent(t, "result-returned.json")
	refused.Type, refused.ID = event.ResultDecided, "Result Decided:tsk_homepagehero01:7"
	refused.Task.State = task.Working
	tests := []struct {
		name                         string
		e                            event.Event
		agent, task, reason, resumes string
	}{
		{"task routed", sampleEvent(t, "task-routed.json"), "bo/codex", "tsk_homepagehero01", wakeup.ReasonTaskRouted, ""},
		{"result returned", sampleEvent(t, "result-returned.json"), "ana/claude", "tsk_homepagehero01", wakeup.ReasonResultReturned, ""},
		{"step decided", sampleEvent(t, "step-decided.json"), "bo/codex", "tsk_homepagehero01", wakeup.ReasonStepDecided, "run_firstrun00001"},
		{"result refused", refused, "bo/codex", "tsk_homepagehero01", wakeup.ReasonResultRefused, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSetup(t)
			s.hooks.hooks = map[string]wakeup.Hook{}
			for range 2 { // a redelivered event stores the same wake-up
				if err := s.waker.Handle(context.Background(), tt.e); err != nil {
					t.Fatal(err)
				}
			}
			if len(s.runs.started) != 0 || len(s.hooks.attempts) != 0 || len(s.rc.got) != 0 {
				t.Errorf("runs %v, attempts %v, posts %v; want no run token and no webhook in pull mode", s.runs.started, s.hooks.attempts, s.rc.got)
			}
			want := wakeup.Pending{ID: wakeup.PendingID(tt.e.ID, tt.agent, tt.e.At), Agent: tt.agent, TaskID: tt.task, Reason: tt.reason, ResumesRun: tt.resumes, EventID: tt.e.ID, CreatedAt: tt.e.At.UTC()}
			if len(s.hooks.pending) != 1 || s.hooks.pending[want.ID] != want {
				t.Errorf("pending = %+v, want %+v", s.hooks.pending, want)
			}
		})
	}
}

func TestClosedTaskIsSkipped(t *testing.T) {
	s := newSetup(t)
	s.runs.err = fmt.Errorf("task t is cancelled: %w", mint.ErrNoRun)
	if err := s.waker.Handle(context.Background(), sampleEvent(t, "task-routed.json")); err != nil {
		t.Fatalf("err = %v, want a skip", err)
	}
	s.runs.err = errors.New("throttled")
	if err := s.waker.Handle(context.Background(), sampleEvent(t, "task-routed.json")); err == nil {
		t.Fatal("a store failure starting the run was swallowed")
	}
}

func TestRetriesUntilTheReceiverTakesIt(t *testing.T) {
	s := newSetup(t, 503, 429)
	if err := s.waker.Handle(context.Background(), sampleEvent(t, "task-routed.json")); err != nil {
		t.Fatal(err)
	}
	var codes []int
	for _, a := range s.hooks.attempts {
		codes = append(codes, a.StatusCode)
	}
	if fmt.Sprint(codes) != "[503 429 204]" || fmt.Sprint(s.waits) != "[500ms 1s]" {
		t.Errorf("attempt codes %v, waits %v; want [503 429 204] and [500ms 1s]", codes, s.waits)
	}
	if len(s.runs.started) != 1 {
		t.Errorf("%d runs minted, want one for all attempts", len(s.runs.started))
	}
}

func TestURLDownRecordsEveryAttemptAndFails(t *testing.T) {
	s := newSetup(t)
	srv := httptest.NewServer(http.NotFoundHandler())
	down := srv.URL
	srv.Close()
	s.hooks.hooks["bo/codex"] = wakeup.Hook{Agent: "bo/codex", URL: down + "/wake?key=do-not-log", Secret: secret}
	err := s.waker.Handle(context.Background(), sampleEvent(t, "task-routed.json"))
	if err == nil {
		t.Fatal("all attempts failed but Handle succeeded: EventBridge would not retry")
	}
	if len(s.hooks.attempts) != 4 || fmt.Sprint(s.waits) != "[500ms 1s 2s]" {
		t.Fatalf("%d attempts, waits %v; want 4 and [500ms 1s 2s]", len(s.hooks.attempts), s.waits)
	}
	for i, a := range s.hooks.attempts {
		if a.Attempt != i+1 || a.Error == "" || a.StatusCode != 0 {
			t.Errorf("attempt %+v", a)
		}
		if strings.Contains(a.Error, "do-not-log") || strings.Contains(a.Error, "prk_r_") {
			t.Errorf("attempt error leaks the URL's query or the token: %s", a.Error)
		}
	}
	if strings.Contains(err.Error(), "do-not-log") {
		t.Errorf("error leaks the URL's query: %v", err)
	}
}

func TestRefusalIsNotRetried(t *testing.T) {
	s := newSetup(t, 400)
	if err := s.waker.Handle(context.Background(), sampleEvent(t, "task-routed.json")); err != nil {
		t.Fatal(err)
	}
	if len(s.hooks.attempts) != 1 || s.hooks.attempts[0].StatusCode != 400 {
		t.Errorf("attempts = %+v, want one 400", s.hooks.attempts)
	}
}

func TestADeliveredWakeIsNotRepeated(t *testing.T) {
	s := newSetup(t)
	e := sampleEvent(t, "step-decided.json")
	for range 2 {
		if err := s.waker.Handle(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	if len(s.rc.got) != 1 || len(s.runs.started) != 1 {
		t.Errorf("woken %d times with %d runs, want once", len(s.rc.got), len(s.runs.started))
	}
}

func TestEventWithoutItsSubjectFails(t *testing.T) {
	s := newSetup(t)
	if err := s.waker.Handle(context.Background(), event.Event{ID: "x", Type: event.StepDecided}); err == nil {
		t.Error("a Step Decided without a step was accepted")
	}
	if err := s.waker.Handle(context.Background(), event.Event{ID: "y", Type: event.TaskRouted}); err == nil {
		t.Error("a Task Routed without a task was accepted")
	}
}
