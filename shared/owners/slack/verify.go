// Package slack is Prickle's Slack interactivity endpoint: it verifies
// Slack's signed requests (v0 HMAC of the signing secret, a 5-minute window,
// each request accepted once), reads the block_actions and view_submission
// payloads of the Approve and Refuse buttons that notify puts on owners'
// messages, and decides the step or result as its owner, the same way the
// approval page does. Only the owner's own Slack user may decide; anyone
// else in the channel gets an ephemeral answer and decides nothing.
package slack

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Headers of a signed Slack request.
const (
	HeaderTimestamp = "X-Slack-Request-Timestamp"
	HeaderSignature = "X-Slack-Signature"
)

// Window is how far a request's timestamp may be from now, either way.
const Window = 5 * time.Minute

// Verification failures; each answers 401 and decides nothing.
var (
	ErrUnsigned = errors.New("slack request: no timestamp or no v0 signature")
	ErrStale    = fmt.Errorf("slack request: timestamp outside the %d-minute window", int(Window/time.Minute))
	ErrForged   = errors.New("slack request: signature does not match the signing secret")
	ErrReplayed = errors.New("slack request: this signed request was received before")
)

// Replays remembers each signed request once; *store.Store satisfies it.
type Replays interface {
	// FirstSlackRequest is true only the first time id is recorded.
	FirstSlackRequest(ctx context.Context, id string, now time.Time) (bool, error)
}

// Sign is the X-Slack-Signature of body sent at timestamp: "v0=" and the hex
// HMAC-SHA256, under the signing secret, of "v0:<timestamp>:<body>".
func Sign(secret []byte, timestamp string, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("v0:" + timestamp + ":"))
	m.Write(body)
	return "v0=" + hex.EncodeToString(m.Sum(nil))
}

// Verify checks a request's timestamp is within Window of now and its
// signature is Sign(secret, timestamp, body), compared in constant time.
func Verify(secret []byte, timestamp, signature string, body []byte, now time.Time) error {
	if timestamp == "" || len(signature) < 3 || signature[:3] != "v0=" || len(secret) == 0 {
		return ErrUnsigned
	}
	sec, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return ErrUnsigned
	}
	if d := now.Sub(time.Unix(sec, 0)); d > Window || d < -Window {
		return ErrStale
	}
	if !hmac.Equal([]byte(signature), []byte(Sign(secret, timestamp, body))) {
		return ErrForged
	}
	return nil
}

// replayID names a signed request for Replays: its timestamp and signature.
func replayID(timestamp, signature string) string { return timestamp + ":" + signature }
