package runner

import (
	"encoding/json"
	"errors"
	"github.com/useprickle/prickle/shared/domain/wakeup"
	"io"
	"log/slog"
	"net/http"
	"time"
)

// maxWebhookBody bounds what the webhook reads; a wake payload is a few hundred bytes.
const maxWebhookBody = 16 << 10

// WebhookHandler serves Prickle's signed wake-ups to a Runner: POST only, the body
// bounded, the signature and its 5-minute window checked with wakeup.Verify
// before anything else reads the body, and each delivery run once.
type WebhookHandler struct {
	Secret string
	Runner interface {
		Offer(key string, w wakeup.Payload, via string, hold Hold) Offered
	}
	// Journal, if set, keeps each delivery until its run has ended by itself.
	Journal *Journal
	Now     func() time.Time
	Log     *slog.Logger
}

// ServeHTTP answers 202 for a new wake-up, 200 for one already taken (not
// run again), 503 while the runner stops (Prickle retries), 401 for a bad or stale signature, 400 for a body that is not
// a wake payload, 405 for other methods, 413 for a body over 16 KiB.
func (h *WebhookHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, ok := wakeup.ReadPost(w, r, maxWebhookBody, "wake-ups are POSTed")
	if !ok {
		return
	}
	now := time.Now
	if h.Now != nil {
		now = h.Now
	}
	if err := wakeup.Verify(h.Secret, r.Header.Get(wakeup.TimestampHeader), r.Header.Get(wakeup.SignatureHeader), body, now()); err != nil {
		why := "bad signature"
		if errors.Is(err, wakeup.ErrStale) {
			why = "stale timestamp"
		}
		h.Log.Warn("webhook refused", "why", why, "remote", r.RemoteAddr)
		http.Error(w, "wake-up refused: "+why, http.StatusUnauthorized)
		return
	}
	var p wakeup.Payload
	if err := json.Unmarshal(body, &p); err != nil || p.TaskID == "" || p.RunID == "" || p.RunToken == "" || len(p.TaskID) > 64 || len(p.RunID) > 128 {
		http.Error(w, "body is not a wake payload {task_id, run_id, run_token, reason, resumes_run}", http.StatusBadRequest)
		return
	}
	var hold Hold
	if h.Journal != nil {
		var err error
		if hold, err = h.Journal.Hold(p); err != nil {
			h.Log.Warn("wake-up not journaled: a stop before its run ends loses it", "task", p.TaskID, "run", p.RunID, "error", err.Error())
		}
	}
	switch h.Runner.Offer(p.RunID, p, "webhook", hold) {
	case Repeated:
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, "already taken; not run again\n")
	case Stopping:
		if hold != nil {
			_ = hold.Done(r.Context()) // Prickle delivers it again
		}
		w.Header().Set("Retry-After", "30")
		http.Error(w, "the runner is stopping; retry later", http.StatusServiceUnavailable)
	default:
		w.WriteHeader(http.StatusAccepted)
	}
}
