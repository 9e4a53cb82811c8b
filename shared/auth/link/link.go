// Package link signs and verifies the tokens of owners' approval links, so
// a link from an email or a Slack message can decide one step, one result
// or one day's model-spend cap without a login. A token is base64url(JSON claims) "." base64url(HMAC-SHA256
// of the first part), encoded and checked by shared/auth/signed. It expires; it is single use because the decision it
// leads to is stored once (a decided step or result refuses a second
// decision), not because the token itself is remembered.
package link

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/useprickle/prickle/shared/auth/signed"
)

// Kinds of approval link: what the owner decides.
const (
	KindStep   = "step"
	KindResult = "result"
	// KindCap decides on an agent's daily model-spend cap reached: raise it
	// for the day, or leave it (shared/team/modelspend.go).
	KindCap = "cap"
)

// ResultLifetime is how long a link to approve a result works: a result has
// no deadline of its own, so the owner gets a week.
const ResultLifetime = 7 * 24 * time.Hour

// MinKeyLength is the shortest HMAC key accepted: 32 bytes, SHA-256's block of strength.
const MinKeyLength = 32

// ErrTampered means the token is malformed or its signature does not match:
// it was not issued by this key, or someone changed it.
var ErrTampered = errors.New("approval link is not valid: it was changed or not issued by Prickle")

// ErrExpired means the token was valid but its time is up.
var ErrExpired = errors.New("approval link expired")

// Claims is what a link grants: the owner may decide this step or this result until Expires.
type Claims struct {
	Kind   string `json:"kind"`
	TaskID string `json:"task_id"`
	StepID string `json:"step_id,omitempty"`
	// Round names the result a result link was sent for (its returned_at),
	// so a link of an earlier round cannot decide a result returned later.
	Round string `json:"round,omitempty"`
	// Agent and Day name the cap a cap link decides on: the agent's, that UTC day.
	Agent string `json:"agent,omitempty"`
	Day   string `json:"day,omitempty"`
	// Holder is the owner who decides, until when, and where the link was
	// delivered (ViaEmail, ViaSlack).
	signed.Holder
}

// Where a link was delivered. An email goes to the owner alone; a Slack
// channel is read by everyone in it.
const (
	ViaEmail = "email"
	ViaSlack = "slack"
)

// DeliveredBy is c as sent through via.
func (c Claims) DeliveredBy(via string) Claims {
	c.Via = via
	return c
}

// Shared reports whether others than the owner may have the link: every
// destination but email, and a link minted before links named theirs. A
// shared link decides only with its owner signed in (see shared/owners/web).
func (c Claims) Shared() bool { return c.Via != ViaEmail }

// Signer signs and verifies approval-link tokens with one HMAC key, shared by notify (signs) and web (verifies).
type Signer struct {
	Key []byte
}

// NewSigner checks the key is long enough to be a secret, so a misconfigured function fails at start, not per link.
func NewSigner(key []byte) (Signer, error) {
	if len(key) < MinKeyLength {
		return Signer{}, fmt.Errorf("signing key is %d bytes; approval links need at least %d", len(key), MinKeyLength)
	}
	return Signer{Key: key}, nil
}

// ForStep builds the claims of a link that decides a step: it lasts as long as the step waits.
func ForStep(taskID, stepID, owner string, expires time.Time) Claims {
	return Claims{Kind: KindStep, TaskID: taskID, StepID: stepID, Holder: signed.Holder{Owner: owner, Expires: expires.UTC()}}
}

// ForResult builds the claims of a link that decides one round of a task's
// result (see task.ResultRound): it lasts ResultLifetime from now.
func ForResult(taskID, round, owner string, now time.Time) Claims {
	return Claims{Kind: KindResult, TaskID: taskID, Round: round, Holder: signed.Holder{Owner: owner, Expires: now.UTC().Add(ResultLifetime)}}
}

// ForCap builds the claims of a link that decides on an agent's cap
// reached on day: it lasts until that UTC day ends, when the cap lifts anyway.
func ForCap(agent, day, owner string, dayEnds time.Time) Claims {
	return Claims{Kind: KindCap, Agent: agent, Day: day, Holder: signed.Holder{Owner: owner, Expires: dayEnds.UTC()}}
}

// Sign returns the token for c; a missing nonce is filled with 12 random bytes.
func (s Signer) Sign(c Claims) string {
	if c.Nonce == "" {
		c.Nonce = signed.Nonce(12)
	}
	c.Expires = c.Expires.UTC()
	return signed.Sign(s.Key, c)
}

// Verify checks the token's signature, then its expiry at now. An expired
// token returns its claims with ErrExpired, so a page can say what expired;
// a tampered one returns no claims.
func (s Signer) Verify(token string, now time.Time) (Claims, error) {
	var c Claims
	if err := signed.Open(s.Key, token, &c); err != nil || !c.wellFormed() {
		return Claims{}, ErrTampered
	}
	if !now.Before(c.Expires) {
		return c, ErrExpired
	}
	return c, nil
}

func (c Claims) wellFormed() bool {
	if c.Owner == "" || c.Expires.IsZero() {
		return false
	}
	switch c.Kind {
	case KindStep:
		return c.TaskID != "" && c.StepID != ""
	case KindResult:
		return c.TaskID != "" && c.StepID == ""
	case KindCap:
		return c.Agent != "" && c.Day != "" && c.TaskID == "" && c.StepID == ""
	}
	return false
}

// FormToken is the value of the hidden field an approval page's form
// carries: an HMAC of the link token under a separate label, checked on POST.
func (s Signer) FormToken(token string) string {
	return signed.MAC(s.Key, "form:"+token)
}

// CheckFormToken reports, in constant time, whether v is FormToken(token).
func (s Signer) CheckFormToken(token, v string) bool {
	return signed.CheckMAC(s.Key, "form:"+token, v)
}

// URL is the approval page of token under base (no trailing slash needed).
func URL(base, token string) string {
	return strings.TrimSuffix(base, "/") + "/a/" + token
}

// CapURL is the page of a cap link's token under base.
func CapURL(base, token string) string {
	return strings.TrimSuffix(base, "/") + "/c/" + token
}
