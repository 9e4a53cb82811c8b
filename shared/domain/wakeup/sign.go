// The signature of a wake-up delivered to an agent's webhook: the waker signs,
// receivers (prickle-runner, the local stack) verify.
package wakeup

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Header names of a signed wake request.
const (
	TimestampHeader = "Prickle-Timestamp" // unix seconds when the request was signed
	SignatureHeader = "Prickle-Signature" // "v1=" + hex HMAC-SHA256(secret, timestamp + "." + body)
)

// ReplayWindow is how far a request's timestamp may be from the receiver's
// clock; older (or future) requests are refused so a captured one cannot be replayed later.
const ReplayWindow = 5 * time.Minute

// ErrBadSignature and ErrStale are why Verify refuses a request.
var (
	ErrBadSignature = errors.New("wake request signature does not match")
	ErrStale        = fmt.Errorf("wake request timestamp is outside the %d-minute window", int(ReplayWindow/time.Minute))
)

// Sign returns the Prickle-Signature value of body sent at timestamp (unix
// seconds): "v1=" and the hex HMAC-SHA256 of "<timestamp>.<body>" under the
// hook's secret. Binding the timestamp stops replays with a new timestamp.
func Sign(secret string, timestamp int64, body []byte) string {
	return "v1=" + hex.EncodeToString(mac(secret, strconv.FormatInt(timestamp, 10), body))
}

func mac(secret, timestamp string, body []byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(timestamp))
	m.Write([]byte("."))
	m.Write(body)
	return m.Sum(nil)
}

// Verify checks a wake request as a receiver gets it: the Prickle-Timestamp
// and Prickle-Signature header values and the raw body. The timestamp must be
// within ReplayWindow of now; the signature may list several comma-separated
// "v1=" values (during a secret rotation) and matches if any does, compared
// in constant time.
func Verify(secret, timestamp, signature string, body []byte, now time.Time) error {
	if secret == "" {
		return fmt.Errorf("verify wake request: no secret configured")
	}
	ts, err := strconv.ParseInt(strings.TrimSpace(timestamp), 10, 64)
	if err != nil {
		return fmt.Errorf("verify wake request: timestamp %q is not unix seconds: %w", timestamp, ErrBadSignature)
	}
	if d := now.Sub(time.Unix(ts, 0)); d > ReplayWindow || d < -ReplayWindow {
		return fmt.Errorf("verify wake request: signed %s from now: %w", d.Round(time.Second), ErrStale)
	}
	want := mac(secret, strconv.FormatInt(ts, 10), body)
	ok := false
	for _, part := range strings.Split(signature, ",") {
		v, found := strings.CutPrefix(strings.TrimSpace(part), "v1=")
		if !found {
			continue
		}
		got, err := hex.DecodeString(v)
		if err != nil {
			continue
		}
		if hmac.Equal(got, want) {
			ok = true
		}
	}
	if !ok {
		return fmt.Errorf("verify wake request: %w", ErrBadSignature)
	}
	return nil
}
