// Package wakeup holds what is kept of waking agents: an agent's hook (its
// webhook URL and secret), each attempt at a wake-up, and the wake-ups
// stored for agents that pull. It is a leaf: the store keeps these records
// and shared/jobs/wakeup (the waker and the receiver), shared/jobs/runnerapi and the operator
// commands read them, so the store imports no waking behaviour for a type.
package wakeup

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/url"
	"time"
)

// Hook is where and how an agent is woken: its webhook URL and the shared
// secret requests are signed with (stored as is, since signing needs it).
type Hook struct {
	Agent     string    `json:"agent"`
	URL       string    `json:"url"`
	Secret    string    `json:"-"`
	UpdatedAt time.Time `json:"updated_at"`
}

// MinSecretLength keeps hook secrets long enough to resist guessing.
const MinSecretLength = 16

// Check refuses hooks that could never be called or verified: the URL must
// be absolute http(s) and the secret at least MinSecretLength characters.
func (h Hook) Check() error {
	u, err := url.Parse(h.URL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("wake hook of %s: URL %q must be an absolute http(s) URL", h.Agent, h.URL)
	}
	if len(h.Secret) < MinSecretLength {
		return fmt.Errorf("wake hook of %s: secret must be at least %d characters", h.Agent, MinSecretLength)
	}
	return nil
}

// NewSecret returns a fresh random hook secret, for operators who do not bring one.
func NewSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("wake secret entropy: %w", err)
	}
	return "whsec_" + base64.RawURLEncoding.EncodeToString(b), nil
}

// Attempt is one try at waking an agent, kept so an operator can see that a
// wake-up was tried, retried and answered (or not). It never holds the token.
type Attempt struct {
	EventID    string    `json:"event_id"`
	RunID      string    `json:"run_id"`
	Agent      string    `json:"agent"`
	TaskID     string    `json:"task_id"`
	Reason     string    `json:"reason"`
	Attempt    int       `json:"attempt"`
	At         time.Time `json:"at"`
	StatusCode int       `json:"status_code,omitempty"`
	Error      string    `json:"error,omitempty"`
}

// Delivered reports whether the receiver accepted the wake-up (a 2xx answer).
func (a Attempt) Delivered() bool { return a.StatusCode >= 200 && a.StatusCode < 300 }
