package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/useprickle/prickle/shared/domain/wakeup"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/useprickle/prickle/shared/kit/wait"
)

// Pull-mode paths on Prickle's base URL.
const (
	ClaimPath  = "/runner/claim"
	AckPath    = "/runner/ack"
	ExtendPath = "/runner/extend"
	EndedPath  = "/runner/ended"
)

// Why a pull stops or an ack is refused.
var (
	ErrUnauthorized = errors.New("the agent token was refused (401/403): check agent_token, or, if this runner joined by prickle-runner login, its owner revoked it: log in again")
	ErrNoPull       = errors.New("this Prickle has no pull endpoint (404 on /runner/claim)")
	ErrStaleClaim   = errors.New("the claim is no longer current (409): the wake-up went back to be claimed again")
	ErrUnknownWake  = errors.New("no such wake-up (404)")
)

// Claimed is one wake-up a claim returned.
type Claimed struct {
	ID           string         `json:"id"`
	Claim        string         `json:"claim"`
	VisibleUntil string         `json:"visible_until"`
	Delivery     wakeup.Payload `json:"delivery"`
}

// Puller claims the agent's wake-ups from Prickle (a long poll of at most
// 25 seconds) and offers each to the runner with a receipt: the runner
// extends the claim while its run waits or runs, and acknowledges it once
// the run has ended by itself; network errors, 429 and 5xx are retried
// with doubling waits.
type Puller struct {
	BaseURL     string
	Token       string
	WaitSeconds int
	HTTP        *http.Client
	Runner      interface {
		Offer(key string, w wakeup.Payload, via string, hold Hold) Offered
		Free() int
	}
	Log *slog.Logger
	// MinBackoff and MaxBackoff bound the wait after a failed claim (default 1s and 30s).
	MinBackoff, MaxBackoff time.Duration
	// Idle is how long to wait before claiming again when no run slot is free (default 500ms).
	Idle time.Duration
}

// NewPuller builds a Puller whose HTTP timeout outlasts the long poll.
func NewPuller(baseURL, token string, waitSeconds int, r interface {
	Offer(key string, w wakeup.Payload, via string, hold Hold) Offered
	Free() int
}, log *slog.Logger) *Puller {
	return &Puller{BaseURL: baseURL, Token: token, WaitSeconds: waitSeconds, Runner: r, Log: log,
		HTTP: &http.Client{Timeout: time.Duration(waitSeconds)*time.Second + 20*time.Second}}
}

// backoffs are the least and the most wait after a failed claim.
func (p *Puller) backoffs() (time.Duration, time.Duration) {
	minB, maxB := p.MinBackoff, p.MaxBackoff
	if minB <= 0 {
		minB = time.Second
	}
	if maxB < minB {
		maxB = max(30*time.Second, minB)
	}
	return minB, maxB
}

// idle is the wait before claiming again when no run slot is free.
func (p *Puller) idle() time.Duration {
	if p.Idle <= 0 {
		return 500 * time.Millisecond
	}
	return p.Idle
}

// Run claims until ctx ends (nil) or Prickle refuses the token or has no pull endpoint.
func (p *Puller) Run(ctx context.Context) error {
	minB, maxB := p.backoffs()
	idle := p.idle()
	backoff := minB
	for ctx.Err() == nil {
		free := min(p.Runner.Free(), 10)
		if free < 1 {
			if wait.For(ctx, idle) != nil {
				return nil
			}
			continue
		}
		got, err := p.Claim(ctx, free)
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, ErrUnauthorized), errors.Is(err, ErrNoPull):
			return err
		case err != nil:
			p.Log.Warn("claim failed; retrying", "error", err.Error(), "in", backoff.String())
			if wait.For(ctx, backoff) != nil {
				return nil
			}
			backoff = min(backoff*2, maxB)
			continue
		}
		backoff = minB
		for _, c := range got {
			p.Runner.Offer(c.ID, c.Delivery, ViaPull, p.receipt(c))
		}
	}
	return nil
}

// Claim asks for up to n wake-ups, waiting up to WaitSeconds for one.
func (p *Puller) Claim(ctx context.Context, n int) ([]Claimed, error) {
	a, err := p.claim(ctx, n, p.WaitSeconds)
	return a.Wakeups, err
}

// claimAnswer is a claim's answer: the wake-ups, and until when the
// agent's others are held by its daily model-spend cap (empty: none held).
type claimAnswer struct {
	Wakeups   []Claimed `json:"wakeups"`
	HeldUntil string    `json:"held_until"`
}

// claim asks for up to n wake-ups, waiting up to wait seconds for one.
func (p *Puller) claim(ctx context.Context, n, wait int) (claimAnswer, error) {
	body, _ := json.Marshal(map[string]int{"wait_seconds": wait, "max": n})
	code, b, err := p.post(ctx, ClaimPath, body)
	if err != nil {
		return claimAnswer{}, err
	}
	switch {
	case code == http.StatusOK:
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return claimAnswer{}, ErrUnauthorized
	case code == http.StatusNotFound:
		return claimAnswer{}, ErrNoPull
	default:
		return claimAnswer{}, fmt.Errorf("claim: HTTP %d: %s", code, clip(string(b), 200))
	}
	var out claimAnswer
	if err := json.Unmarshal(b, &out); err != nil {
		return claimAnswer{}, fmt.Errorf("claim: answer is not {wakeups: [...]}: %w", err)
	}
	ok := []Claimed{}
	for _, c := range out.Wakeups {
		if c.ID == "" || c.Claim == "" || c.Delivery.TaskID == "" || c.Delivery.RunID == "" || c.Delivery.RunToken == "" {
			p.Log.Warn("claim: wake-up without id, claim or delivery skipped", "id", c.ID)
			continue
		}
		ok = append(ok, c)
	}
	out.Wakeups = ok
	return out, nil
}

// Ack acknowledges a claimed wake-up whose run has ended by itself: it is done for good.
func (p *Puller) Ack(ctx context.Context, id, claim string) error {
	_, err := p.settle(ctx, AckPath, id, claim)
	return err
}

// Extend keeps a claimed wake-up from other claims for another visibility
// timeout (its run waits or runs) and returns when that ends.
func (p *Puller) Extend(ctx context.Context, id, claim string) (time.Time, error) {
	b, err := p.settle(ctx, ExtendPath, id, claim)
	if err != nil {
		return time.Time{}, err
	}
	var out struct {
		VisibleUntil time.Time `json:"visible_until"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return time.Time{}, fmt.Errorf("extend %s: answer is not {visible_until}: %w", id, err)
	}
	return out.VisibleUntil, nil
}

// settle posts {id, claim} to path, retrying network errors and 5xx three times.
func (p *Puller) settle(ctx context.Context, path, id, claim string) ([]byte, error) {
	body, _ := json.Marshal(map[string]string{"id": id, "claim": claim})
	var last error
	for attempt := 1; attempt <= 3; attempt++ {
		code, b, err := p.post(ctx, path, body)
		switch {
		case err != nil:
			last = err
		case code == http.StatusNoContent || code == http.StatusOK:
			return b, nil
		case code == http.StatusConflict:
			return nil, ErrStaleClaim
		case code == http.StatusNotFound:
			return nil, ErrUnknownWake
		case code == http.StatusUnauthorized || code == http.StatusForbidden:
			return nil, ErrUnauthorized
		case code >= 500 || code == http.StatusTooManyRequests:
			last = fmt.Errorf("%s: HTTP %d", path, code)
		default:
			return nil, fmt.Errorf("%s: HTTP %d: %s", path, code, clip(string(b), 200))
		}
		if wait.For(ctx, time.Duration(attempt)*500*time.Millisecond) != nil {
			return nil, ctx.Err()
		}
	}
	return nil, fmt.Errorf("%s %s: %w", path, id, last)
}

// receipt is a claim's Hold: Keep extends it halfway through its visibility,
// Done acknowledges it.
type receipt struct {
	p         *Puller
	id, claim string
	mu        sync.Mutex
	next      time.Time
}

func (p *Puller) receipt(c Claimed) *receipt {
	r := &receipt{p: p, id: c.ID, claim: c.Claim}
	until, err := time.Parse(time.RFC3339, c.VisibleUntil)
	if err != nil {
		until = time.Now().Add(minKeepWindow)
	}
	r.schedule(until)
	return r
}

// minKeepWindow is the least time between two extensions of a claim.
const minKeepWindow = time.Second

// schedule sets the next extension halfway to until (from this clock's now,
// so a skewed clock on either side only makes it earlier or later by the skew).
func (r *receipt) schedule(until time.Time) {
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.next = now.Add(max(until.Sub(now)/2, minKeepWindow))
}

func (r *receipt) Next() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.next
}

func (r *receipt) Keep(ctx context.Context) error {
	until, err := r.p.Extend(ctx, r.id, r.claim)
	if errors.Is(err, ErrStaleClaim) || errors.Is(err, ErrUnknownWake) {
		r.mu.Lock()
		r.next = time.Time{} // another claim has it now: nothing left to keep
		r.mu.Unlock()
		return err
	}
	if err != nil {
		r.schedule(time.Now().Add(2 * minKeepWindow))
		return err
	}
	r.schedule(until)
	return nil
}

func (r *receipt) Done(ctx context.Context) error { return r.p.Ack(ctx, r.id, r.claim) }

// maxPullAnswer bounds what a claim or ack answer may be.
const maxPullAnswer = 1 << 20

func (p *Puller) post(ctx context.Context, path string, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.BaseURL+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, fmt.Errorf("%s: %w", path, err)
	}
	req.Header.Set("Authorization", "Bearer "+p.Token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "prickle-runner/1")
	client := p.HTTP
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("%s: %w", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxPullAnswer))
	if err != nil {
		return resp.StatusCode, nil, fmt.Errorf("%s: read answer: %w", path, err)
	}
	return resp.StatusCode, b, nil
}
