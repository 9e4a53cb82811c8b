package wakeup

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/useprickle/prickle/shared/domain/wakeup"
	"github.com/useprickle/prickle/shared/team"
)

// ReceiverPath is where the local stack's receiver listens; an agent's wake
// URL there is ReceiverPath + "owner/agent".
const ReceiverPath = "/dev/wake/"

// HookLookup finds an agent's hook; the store is one.
type HookLookup interface {
	WakeHook(ctx context.Context, agent string) (wakeup.Hook, error)
}

// Receiver is the local stack's stand-in for agents' webhooks: it serves
// POST /dev/wake/{owner/agent}, verifies the request with that agent's hook
// secret exactly as a real receiver should, and hands the payload on (the
// local stack shows it in the dev outbox).
type Receiver struct {
	Hooks   HookLookup
	Deliver func(ctx context.Context, agent string, p wakeup.Payload) error
	Now     func() time.Time
}

// NewReceiver builds a Receiver on the real clock.
func NewReceiver(hooks HookLookup, deliver func(ctx context.Context, agent string, p wakeup.Payload) error) *Receiver {
	return &Receiver{Hooks: hooks, Deliver: deliver, Now: time.Now}
}

// maxWakeBody bounds what the receiver reads; a wake payload is a few hundred bytes.
const maxWakeBody = 64 << 10

// ServeHTTP answers 204 when the wake-up was verified and delivered; 405 for
// other methods, 404 for an agent without a hook, 401 for a bad or stale
// signature, 400 for a body that is not a payload, 500 if delivery failed.
func (rv *Receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	agent, ok := strings.CutPrefix(r.URL.Path, ReceiverPath)
	if !ok || agent == "" {
		http.NotFound(w, r)
		return
	}
	body, ok := wakeup.ReadPost(w, r, maxWakeBody, "wake requests are POSTed")
	if !ok {
		return
	}
	hook, err := rv.Hooks.WakeHook(r.Context(), agent)
	if errors.Is(err, team.ErrNotFound) {
		http.Error(w, "no wake hook for "+agent, http.StatusNotFound)
		return
	}
	if err != nil {
		slog.ErrorContext(r.Context(), "wake receiver: load hook", "agent", agent, "error", err.Error())
		http.Error(w, "could not load the hook", http.StatusInternalServerError)
		return
	}
	now := time.Now
	if rv.Now != nil {
		now = rv.Now
	}
	if err := wakeup.Verify(hook.Secret, r.Header.Get(wakeup.TimestampHeader), r.Header.Get(wakeup.SignatureHeader), body, now()); err != nil {
		slog.WarnContext(r.Context(), "wake receiver: refused", "agent", agent, "error", err.Error())
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	var p wakeup.Payload
	if err := json.Unmarshal(body, &p); err != nil || p.TaskID == "" || p.RunID == "" || p.RunToken == "" {
		http.Error(w, "body is not a wake payload {task_id, run_id, run_token, reason, resumes_run}", http.StatusBadRequest)
		return
	}
	if rv.Deliver != nil {
		if err := rv.Deliver(r.Context(), agent, p); err != nil {
			slog.ErrorContext(r.Context(), "wake receiver: deliver", "agent", agent, "task", p.TaskID, "error", err.Error())
			http.Error(w, "delivery failed", http.StatusInternalServerError)
			return
		}
	}
	w.WriteHeader(http.StatusNoContent)
}
