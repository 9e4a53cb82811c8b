package wakeup

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"time"
)

// Pending is a wake-up stored for an agent with no webhook (pull mode): it
// waits until a runner claims it with the agent's token and acknowledges it.
// It holds no token; the run token is minted when it is claimed.
type Pending struct {
	ID         string
	Agent      string
	TaskID     string
	Reason     string
	ResumesRun string
	EventID    string
	CreatedAt  time.Time
}

// Claimed is a pending wake-up as one claim got it: the receipt that
// acknowledges it and when it becomes claimable again without an ack.
type Claimed struct {
	Pending
	Claim        string
	VisibleUntil time.Time
}

// PendingRetention is how long a stored wake-up waits for a runner (its TTL).
const PendingRetention = 24 * time.Hour

// DefaultVisibility is how long a claimed wake-up stays invisible to other
// claims before it comes back, unless acknowledged.
const DefaultVisibility = 120 * time.Second

// RunRef names the run a claim of a wake-up started: its id and the SHA-256
// of its run token (never the token). Claimed again, that run is over.
type RunRef struct {
	ID        string
	TokenHash string
}

// ErrStaleClaim means an ack named a wake-up with a claim receipt that is not
// its latest one (a wrong receipt, or it was claimed again since).
var ErrStaleClaim = errors.New("wrong or superseded claim")

// PendingID is the id of the wake-up an event stores for an agent: the
// event's time in unix milliseconds (so ids sort oldest first) and a digest of
// the event id and agent (so a redelivered event stores the same wake-up).
func PendingID(eventID, agent string, at time.Time) string {
	sum := sha256.Sum256([]byte(eventID + "\x00" + agent))
	return fmt.Sprintf("wk_%013d_%s", at.UTC().UnixMilli(), hex.EncodeToString(sum[:8]))
}

var pendingIDPattern = regexp.MustCompile(`^wk_[0-9]{13}_[0-9a-f]{16}$`)

// ValidPendingID reports whether id has the shape PendingID makes, so a
// malformed id is refused before any read.
func ValidPendingID(id string) bool { return pendingIDPattern.MatchString(id) }

// NewClaim returns a fresh claim receipt; only its ClaimHash is stored.
func NewClaim() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("claim receipt entropy: %w", err)
	}
	return "wkc_" + base64.RawURLEncoding.EncodeToString(b), nil
}

// MaxClaimLength bounds a claim receipt read from a request.
const MaxClaimLength = 64

// ClaimHash is how a claim receipt is stored and compared.
func ClaimHash(claim string) string {
	sum := sha256.Sum256([]byte(claim))
	return hex.EncodeToString(sum[:])
}
