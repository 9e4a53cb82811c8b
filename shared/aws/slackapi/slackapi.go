// Package slackapi posts and edits owners' Slack messages through the Web
// API (chat.postMessage, chat.update) with a bot token: notify's Slack port
// in the cloud. For the interactivity endpoint it also opens modals
// (views.open) and answers an interaction through its response_url.
package slackapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/useprickle/prickle/shared/owners/notify"
)

// DefaultBaseURL is Slack's Web API.
const DefaultBaseURL = "https://slack.com/api"

// DefaultResponsePrefix is where every response_url Slack issues points;
// Respond refuses any other URL, so a forged payload cannot make Prickle
// POST to a host of its choosing.
const DefaultResponsePrefix = "https://hooks.slack.com/"

// Client calls the Web API with a bot token (scope chat:write).
type Client struct {
	Token string
	// BaseURL is DefaultBaseURL unless a test points it elsewhere.
	BaseURL string
	// ResponsePrefix is DefaultResponsePrefix unless a test points it elsewhere.
	ResponsePrefix string
	HTTP           *http.Client
}

// New builds a client for a bot token with a bounded HTTP timeout.
func New(token string) (*Client, error) {
	if token == "" {
		return nil, errors.New("slack client: no bot token")
	}
	return &Client{Token: token, BaseURL: DefaultBaseURL, HTTP: &http.Client{Timeout: 10 * time.Second}}, nil
}

type request struct {
	Channel     string          `json:"channel"`
	TS          string          `json:"ts,omitempty"`
	Text        string          `json:"text"`
	Blocks      json.RawMessage `json:"blocks,omitempty"`
	UnfurlLinks bool            `json:"unfurl_links"`
	UnfurlMedia bool            `json:"unfurl_media"`
}

type response struct {
	OK      bool   `json:"ok"`
	Error   string `json:"error"`
	Channel string `json:"channel"`
	TS      string `json:"ts"`
}

// Post sends a message with chat.postMessage (no unfurling: an unfurler must not fetch the approval link).
func (c *Client) Post(ctx context.Context, m notify.SlackMessage) (notify.MessageRef, error) {
	r, err := c.call(ctx, "chat.postMessage", request{Channel: m.Channel, Text: m.Text, Blocks: m.Blocks})
	if err != nil {
		return notify.MessageRef{}, err
	}
	return notify.MessageRef{Channel: r.Channel, TS: r.TS}, nil
}

// Update replaces a posted message's text and blocks with chat.update.
func (c *Client) Update(ctx context.Context, ref notify.MessageRef, m notify.SlackMessage) error {
	_, err := c.call(ctx, "chat.update", request{Channel: ref.Channel, TS: ref.TS, Text: m.Text, Blocks: m.Blocks})
	return err
}

// OpenView opens a modal for the user whose click gave triggerID (valid 3 seconds), with views.open.
func (c *Client) OpenView(ctx context.Context, triggerID string, view json.RawMessage) error {
	_, err := c.call(ctx, "views.open", struct {
		TriggerID string          `json:"trigger_id"`
		View      json.RawMessage `json:"view"`
	}{triggerID, view})
	return err
}

// Respond POSTs a message (e.g. an ephemeral one) to an interaction's
// response_url; only URLs under ResponsePrefix are called, and redirects are not followed.
func (c *Client) Respond(ctx context.Context, responseURL string, body json.RawMessage) error {
	prefix := c.ResponsePrefix
	if prefix == "" {
		prefix = DefaultResponsePrefix
	}
	if !under(responseURL, prefix) {
		return fmt.Errorf("slack response_url: not under %s, not called", prefix)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, responseURL, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("slack response_url: %w", err)
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	hc := *c.httpClient()
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("slack response_url: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("slack response_url: HTTP %d", resp.StatusCode)
	}
	return nil
}

// under reports whether raw is an absolute URL with prefix's scheme and host
// (no user info, no other port) whose path starts with prefix's path.
func under(raw, prefix string) bool {
	u, err := url.Parse(raw)
	p, perr := url.Parse(prefix)
	if err != nil || perr != nil || u.User != nil || u.Opaque != "" {
		return false
	}
	return u.Scheme == p.Scheme && u.Host == p.Host && strings.HasPrefix(u.Path, p.Path) && strings.HasPrefix(raw, prefix)
}

func (c *Client) httpClient() *http.Client {
	if c.HTTP == nil {
		return http.DefaultClient
	}
	return c.HTTP
}

func (c *Client) call(ctx context.Context, method string, body any) (response, error) {
	payload, err := json.Marshal(body)
	if err != nil {
		return response{}, fmt.Errorf("slack %s: %w", method, err)
	}
	base := c.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/"+method, bytes.NewReader(payload))
	if err != nil {
		return response{}, fmt.Errorf("slack %s: %w", method, err)
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("Authorization", "Bearer "+c.Token)
	resp, err := c.httpClient().Do(req)
	if err != nil {
		return response{}, fmt.Errorf("slack %s: %w", method, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return response{}, fmt.Errorf("slack %s: read answer: %w", method, err)
	}
	if resp.StatusCode == http.StatusTooManyRequests {
		return response{}, fmt.Errorf("slack %s: rate limited (retry after %s s)", method, resp.Header.Get("Retry-After"))
	}
	if resp.StatusCode != http.StatusOK {
		return response{}, fmt.Errorf("slack %s: HTTP %d", method, resp.StatusCode)
	}
	var r response
	if err := json.Unmarshal(raw, &r); err != nil {
		return response{}, fmt.Errorf("slack %s: answer is not JSON: %w", method, err)
	}
	if !r.OK {
		return response{}, fmt.Errorf("slack %s: %s", method, r.Error)
	}
	return r, nil
}

var _ notify.Slack = (*Client)(nil)
