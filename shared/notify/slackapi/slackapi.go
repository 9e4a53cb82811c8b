// Package slackapi posts and edits owners' Slack messages through the Web
// API (chat.postMessage, chat.update) with a bot token: notify's Slack port in the cloud.
package slackapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/useprickle/prickle/shared/notify"
)

// DefaultBaseURL is Slack's Web API.
const DefaultBaseURL = "https://slack.com/api"

// Client calls the Web API with a bot token (scope chat:write).
type Client struct {
	Token string
	// BaseURL is DefaultBaseURL unless a test points it elsewhere.
	BaseURL string
	HTTP    *http.Client
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

func (c *Client) call(ctx context.Context, method string, body request) (response, error) {
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
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
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
