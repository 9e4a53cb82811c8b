//go:build integration

package wakeup_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/domain/audit"
	"github.com/useprickle/prickle/shared/domain/event"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/domain/wakeup"
	wakeupjob "github.com/useprickle/prickle/shared/jobs/wakeup"
	"github.com/useprickle/prickle/shared/team/mint"
)

// TestWakeURLDownThenUp is acceptance 5's second half: with the wake URL
// down, every attempt is recorded and the task stays as it was; when
// EventBridge retries and the URL is up, the agent is woken with a run token
// bound to (agent, task, new run), verified by the local receiver.
func TestWakeURLDownThenUp(t *testing.T) {
	st, adm, tk := routedTask(t, "tsk_wake1")
	ctx, at, must := context.Background(), tk.CreatedAt, mustOf(t)

	// The local receiver, verifying with the hook's secret.
	var woken []wakeup.Payload
	mux := http.NewServeMux()
	mux.Handle(wakeupjob.ReceiverPath, wakeupjob.NewReceiver(st, func(_ context.Context, _ string, p wakeup.Payload) error {
		woken = append(woken, p)
		return nil
	}))
	up := httptest.NewServer(mux)
	defer up.Close()
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL
	down.Close()

	secret, err := wakeup.NewSecret()
	must(err)
	must(st.PutWakeHook(ctx, wakeup.Hook{Agent: "bo/codex", URL: downURL + wakeupjob.ReceiverPath + "bo/codex", Secret: secret}))

	w := wakeupjob.NewWaker(st, adm)
	w.Sleep = func(context.Context, time.Duration) error { return nil }
	routed := event.ForTask(event.TaskRouted, tk, "ana/claude", at)
	if err := w.Handle(ctx, routed); err == nil {
		t.Fatal("wake with the URL down succeeded")
	}
	attempts, err := st.WakeAttempts(ctx, tk.ID)
	must(err)
	if len(attempts) != 4 {
		t.Fatalf("%d attempts recorded, want 4: %+v", len(attempts), attempts)
	}
	for _, a := range attempts {
		if a.Error == "" || a.Agent != "bo/codex" || a.Reason != wakeup.ReasonTaskRouted || a.EventID != routed.ID {
			t.Errorf("attempt %+v", a)
		}
	}
	got, err := st.Task(ctx, tk.ID)
	must(err)
	if got.State != task.Routed || got.Version != 1 {
		t.Errorf("task after failed wake = %s v%d, want routed v1: not lost, not changed", got.State, got.Version)
	}

	// The agent's URL comes back; EventBridge's retry delivers.
	must(st.PutWakeHook(ctx, wakeup.Hook{Agent: "bo/codex", URL: up.URL + wakeupjob.ReceiverPath + "bo/codex", Secret: secret}))
	must(w.Handle(ctx, routed))
	must(w.Handle(ctx, routed)) // a duplicate delivery wakes no one twice
	if len(woken) != 1 {
		t.Fatalf("woken %d times, want 1", len(woken))
	}
	p := woken[0]
	caller, err := identity.Authenticate(ctx, st, p.RunToken, time.Now())
	must(err)
	if caller.Kind != identity.KindRun || caller.Agent != "bo/codex" || caller.TaskID != tk.ID || caller.RunID != p.RunID || p.Reason != wakeup.ReasonTaskRouted {
		t.Errorf("run token is %+v for payload %+v", caller, p)
	}

	// The requester is woken for a returned result, with a token for this task.
	must(st.PutWakeHook(ctx, wakeup.Hook{Agent: "ana/claude", URL: up.URL + wakeupjob.ReceiverPath + "ana/claude", Secret: secret}))
	returned := tk
	returned.State, returned.Version = task.Verifying, 5
	must(w.Handle(ctx, event.ForTask(event.ResultReturned, returned, "bo/codex", at)))
	if len(woken) != 2 {
		t.Fatalf("requester not woken: %+v", woken)
	}
	caller, err = identity.Authenticate(ctx, st, woken[1].RunToken, time.Now())
	must(err)
	if caller.Agent != "ana/claude" || caller.TaskID != tk.ID || woken[1].Reason != wakeup.ReasonResultReturned {
		t.Errorf("requester's run token is %+v", caller)
	}
}

// TestRunTokensSayWhoMintedThem: the audit trail records a run token the
// wakeup function mints for a webhook delivery as minted by Prickle for that
// event and reason, and one an operator mints with the admin CLI as theirs.
func TestRunTokensSayWhoMintedThem(t *testing.T) {
	st, adm, tk := routedTask(t, "tsk_minted1")
	ctx, at, must := context.Background(), tk.CreatedAt, mustOf(t)
	mux := http.NewServeMux()
	var woken []wakeup.Payload
	mux.Handle(wakeupjob.ReceiverPath, wakeupjob.NewReceiver(st, func(_ context.Context, _ string, p wakeup.Payload) error {
		woken = append(woken, p)
		return nil
	}))
	up := httptest.NewServer(mux)
	defer up.Close()
	secret, err := wakeup.NewSecret()
	must(err)
	must(st.PutWakeHook(ctx, wakeup.Hook{Agent: "bo/codex", URL: up.URL + wakeupjob.ReceiverPath + "bo/codex", Secret: secret}))
	routed := event.ForTask(event.TaskRouted, tk, "ana/claude", at)
	must(wakeupjob.NewWaker(st, adm).Handle(ctx, routed))
	if len(woken) != 1 {
		t.Fatalf("woken %d times, want 1", len(woken))
	}
	cli, err := adm.StartRun(ctx, mint.ByOperator, "bo/codex", tk.ID, "")
	must(err)

	entries, err := st.ProjectAudit(ctx, "website-v2")
	must(err)
	minted := map[string]audit.Entry{} // by run id
	for _, e := range entries {
		for _, run := range []string{woken[0].RunID, cli.RunID} {
			if e.Action == audit.TokenMinted && e.TaskID == tk.ID && strings.Contains(e.Detail, ", run "+run) {
				minted[run] = e
			}
		}
	}
	for _, tc := range []struct {
		name, run, actor, via, detail string
	}{
		{"webhook wake-up", woken[0].RunID, task.System, audit.ViaWebhook, "; woken by event " + routed.ID + " for " + wakeup.ReasonTaskRouted},
		{"admin CLI", cli.RunID, "operator", audit.ViaAdmin, "run token"},
	} {
		e, ok := minted[tc.run]
		if !ok {
			t.Errorf("%s: no token_minted entry for run %s in %+v", tc.name, tc.run, entries)
			continue
		}
		if e.Actor != tc.actor || e.Via != tc.via || !strings.Contains(e.Detail, tc.detail) {
			t.Errorf("%s: minted by %q via %q: %q; want %q via %q, with %q", tc.name, e.Actor, e.Via, e.Detail, tc.actor, tc.via, tc.detail)
		}
	}
}
