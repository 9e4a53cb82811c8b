package wakeup

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestSignMatchesTheDocumentedScheme(t *testing.T) {
	// HMAC-SHA256("whsec_test_secret_123", "1796000000.{}") computed independently:
	// printf '1796000000.{}' | openssl dgst -sha256 -hmac whsec_test_secret_123
	const want = "v1=1316932c925953bd9ef22855e1413850f17e889c8a317787ef7f922896216997"
	if got := Sign("whsec_test_secret_123", 1796000000, []byte("{}")); got != want {
		t.Fatalf("Sign = %s, want %s", got, want)
	}
}

func TestVerify(t *testing.T) {
	const secret = "whsec_0123456789abcdef"
	body := []byte(`{"task_id":"t1","run_id":"run_1","run_token":"prk_r_x","reason":"task_routed","resumes_run":""}`)
	now := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	ts := now.Unix()
	sig := Sign(secret, ts, body)
	tsStr := strconv.FormatInt(ts, 10)

	tests := []struct {
		name      string
		secret    string
		timestamp string
		signature string
		body      []byte
		at        time.Time
		want      error
	}{
		{"valid", secret, tsStr, sig, body, now, nil},
		{"valid 4m59s later", secret, tsStr, sig, body, now.Add(4*time.Minute + 59*time.Second), nil},
		{"rotation: one of several signatures", secret, tsStr, "v1=00ff, " + sig, body, now, nil},
		{"tampered body", secret, tsStr, sig, append([]byte(nil), append(body[:len(body)-1], ' ', '}')...), now, ErrBadSignature},
		{"other secret", "whsec_fedcba9876543210", tsStr, sig, body, now, ErrBadSignature},
		{"timestamp moved", secret, strconv.FormatInt(ts+1, 10), sig, body, now, ErrBadSignature},
		{"replayed after 5 minutes", secret, tsStr, sig, body, now.Add(5*time.Minute + time.Second), ErrStale},
		{"from the future", secret, tsStr, sig, body, now.Add(-6 * time.Minute), ErrStale},
		{"no v1 prefix", secret, tsStr, sig[3:], body, now, ErrBadSignature},
		{"not hex", secret, tsStr, "v1=zz", body, now, ErrBadSignature},
		{"timestamp not a number", secret, "yesterday", sig, body, now, ErrBadSignature},
		{"empty signature", secret, tsStr, "", body, now, ErrBadSignature},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Verify(tt.secret, tt.timestamp, tt.signature, tt.body, tt.at)
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Errorf("Verify = %v, want %v", err, tt.want)
			}
		})
	}
	if err := Verify("", tsStr, sig, body, now); err == nil {
		t.Error("verified with no secret")
	}
}

// TestErrStaleSaysReplayWindow: the refusal says the window ReplayWindow is.
func TestErrStaleSaysReplayWindow(t *testing.T) {
	if want := fmt.Sprintf("%d-minute window", int(ReplayWindow/time.Minute)); !strings.Contains(ErrStale.Error(), want) {
		t.Errorf("ErrStale = %q, want it to say %q", ErrStale, want)
	}
}
