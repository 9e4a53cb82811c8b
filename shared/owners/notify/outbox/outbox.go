// Package outbox is the local stack's dev outbox: every email, Slack message
// and wake-up that would have left the machine is recorded here instead, so
// a developer (and the e2e tests) can read them and follow their links. It
// implements notify's Mailer and Slack ports. Memory only, safe for concurrent use.
package outbox

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/useprickle/prickle/shared/owners/notify"
)

// Channels a message went out on.
const (
	ChannelEmail = "email"
	ChannelSlack = "slack"
	ChannelWake  = "wake"
)

// Message is one message that would have been sent; the JSON names are the
// /dev/outbox.json contract the e2e tests read.
type Message struct {
	At      time.Time `json:"at"`
	Channel string    `json:"channel"`
	To      string    `json:"to"`
	Subject string    `json:"subject"`
	Text    string    `json:"text"`
	// Links lists every URL in the message, approval links first, so tests can follow them.
	Links []string `json:"links"`
	// Body is what would have gone over the wire (the Slack payload, the email, the wake request).
	Body json.RawMessage `json:"body"`
}

// Outbox records messages in the order they were sent.
type Outbox struct {
	// Now stamps messages that arrive without a time; tests may inject a clock.
	Now func() time.Time

	mu       sync.Mutex
	messages []Message
	slackSeq int
}

// New returns an empty outbox on the real clock.
func New() *Outbox { return &Outbox{Now: time.Now} }

// Add records a message (newest last), stamping it with the outbox's clock when At is zero.
func (o *Outbox) Add(m Message) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if m.At.IsZero() {
		m.At = o.now()
	}
	if m.Links == nil {
		m.Links = []string{}
	}
	if len(m.Body) == 0 {
		m.Body = json.RawMessage(`{}`)
	}
	o.messages = append(o.messages, m)
}

// List returns a copy of every message, oldest first, newest last.
func (o *Outbox) List() []Message {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make([]Message, len(o.messages))
	copy(out, o.messages)
	return out
}

func (o *Outbox) now() time.Time {
	if o.Now == nil {
		return time.Now().UTC()
	}
	return o.Now().UTC()
}

// SendEmail records the email as the SES adapter would send it.
func (o *Outbox) SendEmail(_ context.Context, e notify.Email) error {
	body, err := marshalPlain(e)
	if err != nil {
		return fmt.Errorf("outbox email to %s: %w", e.To, err)
	}
	o.Add(Message{Channel: ChannelEmail, To: e.To, Subject: e.Subject, Text: e.Text, Links: e.Links, Body: body})
	return nil
}

// Post records a Slack message and returns a reference (channel + a made-up ts) for a later Update.
func (o *Outbox) Post(_ context.Context, m notify.SlackMessage) (notify.MessageRef, error) {
	o.mu.Lock()
	o.slackSeq++
	ref := notify.MessageRef{Channel: m.Channel, TS: fmt.Sprintf("outbox.%06d", o.slackSeq)}
	o.mu.Unlock()
	return ref, o.addSlack(ref, m, "", "")
}

// Update records the new version of a posted Slack message as a message of
// its own: the outbox is an append-only log, so the original stays as it
// was and the copy's subject starts with "updated: ", its body naming the
// ts it replaces (chat.update's "ts").
func (o *Outbox) Update(_ context.Context, ref notify.MessageRef, m notify.SlackMessage) error {
	return o.addSlack(ref, m, "updated: ", ref.TS)
}

func (o *Outbox) addSlack(ref notify.MessageRef, m notify.SlackMessage, prefix, updates string) error {
	payload := struct {
		Channel string          `json:"channel"`
		TS      string          `json:"ts"`
		Updates string          `json:"update_of,omitempty"`
		Text    string          `json:"text"`
		Blocks  json.RawMessage `json:"blocks,omitempty"`
	}{Channel: ref.Channel, TS: ref.TS, Updates: updates, Text: m.Text, Blocks: m.Blocks}
	body, err := marshalPlain(payload)
	if err != nil {
		return fmt.Errorf("outbox slack message to %s: %w", m.Channel, err)
	}
	o.Add(Message{Channel: ChannelSlack, To: ref.Channel, Subject: prefix + m.Subject, Text: m.Text, Links: m.Links, Body: body})
	return nil
}

// OpenView records the modal views.open would have opened for the click
// that gave triggerID; its body is the view, its subject "modal: <title>".
func (o *Outbox) OpenView(_ context.Context, triggerID string, view json.RawMessage) error {
	var v struct {
		Title struct {
			Text string `json:"text"`
		} `json:"title"`
		Blocks []struct {
			Text struct {
				Text string `json:"text"`
			} `json:"text"`
		} `json:"blocks"`
	}
	if err := json.Unmarshal(view, &v); err != nil {
		return fmt.Errorf("outbox modal: %w", err)
	}
	text := ""
	if len(v.Blocks) > 0 {
		text = v.Blocks[0].Text.Text
	}
	o.Add(Message{Channel: ChannelSlack, To: "trigger " + triggerID, Subject: "modal: " + v.Title.Text, Text: text, Body: view})
	return nil
}

// Respond records what would have been POSTed to an interaction's
// response_url; an ephemeral answer's subject is "ephemeral: <text>".
func (o *Outbox) Respond(_ context.Context, responseURL string, body json.RawMessage) error {
	var r struct {
		ResponseType string `json:"response_type"`
		Text         string `json:"text"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return fmt.Errorf("outbox response to %s: %w", responseURL, err)
	}
	kind := r.ResponseType
	if kind == "" {
		kind = "response"
	}
	o.Add(Message{Channel: ChannelSlack, To: responseURL, Subject: kind + ": " + r.Text, Text: r.Text, Body: body})
	return nil
}

// MarshalList writes messages as the /dev/outbox.json array, without HTML
// escaping so that & < > in commands read as typed.
func MarshalList(msgs []Message) ([]byte, error) {
	if msgs == nil {
		msgs = []Message{}
	}
	return marshalPlain(msgs)
}

func marshalPlain(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("marshal %T: %w", v, err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

var (
	_ notify.Mailer = (*Outbox)(nil)
	_ notify.Slack  = (*Outbox)(nil)
)
