// Package signed is the one codec of Prickle's HMAC-signed tokens: approval
// links (shared/auth/link), sign-in links and session cookies (shared/auth/session).
// A token is base64url(JSON claims) "." base64url(HMAC-SHA256 of the first
// part). Base64 is strict and refuses line breaks, so each token has one
// spelling; signatures are compared in constant time; an empty key verifies
// nothing.
package signed

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Holder is what every signed token says of whom it is for: the owner,
// until when, a nonce that makes each token distinct (so two for the same
// purpose never collide in logs or caches), and where it was delivered
// (email, Slack, ...), signed with the rest so a page knows who may have
// read it. Each token embeds it after what it is for.
type Holder struct {
	Owner   string    `json:"owner"`
	Expires time.Time `json:"exp"`
	Nonce   string    `json:"nonce"`
	Via     string    `json:"via,omitempty"`
}

// ErrInvalid means a token is malformed, its signature does not match the
// key, or its claims are not JSON; callers answer it with their own message.
var ErrInvalid = errors.New("signed token is malformed or not signed by this key")

// b64 is strict: a token whose unused trailing bits are set (another last
// character for the same bytes) does not decode, so each token has one spelling.
var b64 = base64.RawURLEncoding.Strict()

var errLineBreak = errors.New("base64url with a line break")

// decode reads strict base64url, and also refuses the line breaks Go's
// decoders skip even when strict, so a token with "\n" inside is not the
// same token either.
func decode(s string) ([]byte, error) {
	if strings.ContainsAny(s, "\r\n") {
		return nil, errLineBreak
	}
	return b64.DecodeString(s)
}

func mac(key []byte, msg string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(msg))
	return m.Sum(nil)
}

// Sign returns the token of claims under key; claims are plain strings and
// times, so marshalling them cannot fail.
func Sign(key []byte, claims any) string {
	body, err := json.Marshal(claims)
	if err != nil {
		panic(fmt.Sprintf("marshal signed claims: %v", err))
	}
	payload := b64.EncodeToString(body)
	return payload + "." + MAC(key, payload)
}

// Open checks token's signature under key and unmarshals its claims into
// dst; any failure is ErrInvalid, so a forged token says nothing of why.
func Open(key []byte, token string, dst any) error {
	payload, sig, ok := strings.Cut(token, ".")
	if !ok || payload == "" || sig == "" || !CheckMAC(key, payload, sig) {
		return ErrInvalid
	}
	body, err := decode(payload)
	if err != nil {
		return ErrInvalid
	}
	if err := json.Unmarshal(body, dst); err != nil {
		return ErrInvalid
	}
	return nil
}

// MAC is the base64url HMAC-SHA256 of msg under key: a token's signature,
// or a form token bound to a labelled message.
func MAC(key []byte, msg string) string {
	return b64.EncodeToString(mac(key, msg))
}

// CheckMAC reports, in constant time, whether v is MAC(key, msg) in its one
// spelling; with an empty key it is always false.
func CheckMAC(key []byte, msg, v string) bool {
	got, err := decode(v)
	return err == nil && len(key) > 0 && hmac.Equal(got, mac(key, msg))
}

// Nonce returns n random bytes in base64url, so two tokens of the same
// claims never collide.
func Nonce(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err))
	}
	return b64.EncodeToString(b)
}
