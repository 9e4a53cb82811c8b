package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/useprickle/prickle/shared/pause"
	"github.com/useprickle/prickle/shared/wake"
)

// Pull-mode paths on Prickle's base URL.
const (
	ClaimPath = "/runner/claim"
	AckPath   = "/runner/ack"
)

// Why a pull stops or an ack is refused.
var (
	ErrUnauthorized = errors.New("the agent token was refused (401/403): check agent_token")
	ErrNoPull       = errors.New("this Prickle has no pull endpoint (404 on /runner/claim)")
	ErrStaleClaim   = errors.New("the claim is no longer current (409): the wake-up went back to be claimed again")
	ErrUnknownWake  = errors.New("no such wake-up (404)")
)

// Claimed is one wake-up a claim returned.
type Claimed struct {
	ID           string       `json:"id"`
	Claim        string       `json:"claim"`
	VisibleUntil string       `json:"visible_until"`
	Delivery     wake.Payload `json:"delivery"`
}

// Puller claims the agent's wake-ups from Prickle (a long poll of at most
// 25 seconds), offers each to the runner, and acknowledges it once its run
// has started; network errors, 429 and 5xx are retried with doubling waits.
type Puller struct {
	BaseURL     string
	Token       string
	WaitSeconds int
	HTTP        *http.Client
	Runner      interface {
		Offer(key string, w wake.Payload, via string, ack Ack) Offered
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
	Offer(key string, w wake.Payload, via string, ack Ack) Offered
	Free() int
}, log *slog.Logger) *Puller {
	return &Puller{BaseURL: baseURL, Token: token, WaitSeconds: waitSeconds, Runner: r, Log: log,
		HTTP: &http.Client{Timeout: time.Duration(waitSeconds)*time.Second + 20*time.Second}}
}

// Run claims until ctx ends (nil) or Prickle refuses the token or has no pull endpoint.
func (p *Puller) Run(ctx context.Context) error {
	minB, maxB, idle := p.MinBackoff, p.MaxBackoff, p.Idle
	if minB <= 0 {
		minB = time.Second
	}
	if maxB < minB {
		maxB = max(30*time.Second, minB)
	}
	if idle <= 0 {
		idle = 500 * time.Millisecond
	}
	backoff := minB
	for ctx.Err() == nil {
		free := min(p.Runner.Free(), 10)
		if free < 1 {
			if pause.For(ctx, idle) != nil {
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
			if pause.For(ctx, backoff) != nil {
				return nil
			}
			backoff = min(backoff*2, maxB)
			continue
		}
		backoff = minB
		for _, c := range got {
			p.Runner.Offer(c.ID, c.Delivery, "pull", func(ctx context.Context) error { return p.Ack(ctx, c.ID, c.Claim) })
		}
	}
	return nil
}

// Claim asks for up to n wake-ups, waiting up to WaitSeconds for one.
func (p *Puller) Claim(ctx context.Context, n int) ([]Claimed, error) {
	body, _ := json.Marshal(map[string]int{"wait_seconds": p.WaitSeconds, "max": n})
	code, b, err := p.post(ctx, ClaimPath, body)
	if err != nil {
		return nil, err
	}
	switch {
	case code == http.StatusOK:
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return nil, ErrUnauthorized
	case code == http.StatusNotFound:
		return nil, ErrNoPull
	default:
		return nil, fmt.Errorf("claim: HTTP %d: %s", code, clip(string(b), 200))
	}
	var out struct {
		Wakeups []Claimed `json:"wakeups"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("claim: answer is not {wakeups: [...]}: %w", err)
	}
	var ok []Claimed
	for _, c := range out.Wakeups {
		if c.ID == "" || c.Claim == "" || c.Delivery.TaskID == "" || c.Delivery.RunID == "" || c.Delivery.RunToken == "" {
			p.Log.Warn("claim: wake-up without id, claim or delivery skipped", "id", c.ID)
			continue
		}
		ok = append(ok, c)
	}
	return ok, nil
}

// Ack acknowledges a claimed wake-up whose run has started, retrying network errors and 5xx three times.
func (p *Puller) Ack(ctx context.Context, id, claim string) error {
	body, _ := json.Marshal(map[string]string{"id": id, "claim": claim})
	var last error
	for attempt := 1; attempt <= 3; attempt++ {
		code, b, err := p.post(ctx, AckPath, body)
		switch {
		case err != nil:
			last = err
		case code == http.StatusNoContent || code == http.StatusOK:
			return nil
		case code == http.StatusConflict:
			return ErrStaleClaim
		case code == http.StatusNotFound:
			return ErrUnknownWake
		case code == http.StatusUnauthorized || code == http.StatusForbidden:
			return ErrUnauthorized
		case code >= 500 || code == http.StatusTooManyRequests:
			last = fmt.Errorf("ack: HTTP %d", code)
		default:
			return fmt.Errorf("ack: HTTP %d: %s", code, clip(string(b), 200))
		}
		if pause.For(ctx, time.Duration(attempt)*500*time.Millisecond) != nil {
			return ctx.Err()
		}
	}
	return fmt.Errorf("ack %s: %w", id, last)
}

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
