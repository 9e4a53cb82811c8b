package slack_test

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/owners/slack"
)

// TestSignMatchesSlacksDocumentedExample is the worked example of Slack's
// "Verifying requests from Slack" page (secret, timestamp, body, signature).
func TestSignMatchesSlacksDocumentedExample(t *testing.T) {
	body := []byte("token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c")
	got := slack.Sign([]byte("8f742231b10e8888abcd99yyyzzz85a5"), "1531420618", body)
	if want := "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503"; got != want {
		t.Errorf("Sign = %s, want %s", got, want)
	}
}

func TestVerify(t *testing.T) {
	now := time.Date(2026, 12, 1, 19, 0, 0, 0, time.UTC)
	body := []byte("payload=%7B%22type%22%3A%22block_actions%22%7D")
	ts := strconv.FormatInt(now.Unix(), 10)
	at := func(d time.Duration) string { return strconv.FormatInt(now.Add(d).Unix(), 10) }
	cases := []struct {
		name, ts, sig string
		secret        []byte
		body          []byte
		want          error
	}{
		{"valid", ts, slack.Sign(secret, ts, body), secret, body, nil},
		{"valid 4m59s old", at(-299 * time.Second), slack.Sign(secret, at(-299*time.Second), body), secret, body, nil},
		{"forged: another secret", ts, slack.Sign([]byte("guess"), ts, body), secret, body, slack.ErrForged},
		{"forged: body changed", ts, slack.Sign(secret, ts, body), secret, append([]byte{}, "payload=%7B%7D"...), slack.ErrForged},
		{"forged: signature of another timestamp", ts, slack.Sign(secret, at(-time.Second), body), secret, body, slack.ErrForged},
		{"forged: upper-case hex", ts, "v0=" + upper(slack.Sign(secret, ts, body)[3:]), secret, body, slack.ErrForged},
		{"stale: 5m01s old", at(-301 * time.Second), slack.Sign(secret, at(-301*time.Second), body), secret, body, slack.ErrStale},
		{"future: 5m01s ahead", at(301 * time.Second), slack.Sign(secret, at(301*time.Second), body), secret, body, slack.ErrStale},
		{"missing timestamp", "", slack.Sign(secret, "", body), secret, body, slack.ErrUnsigned},
		{"missing signature", ts, "", secret, body, slack.ErrUnsigned},
		{"other version", ts, "v1=" + slack.Sign(secret, ts, body)[3:], secret, body, slack.ErrUnsigned},
		{"timestamp not a number", "1.5e9", slack.Sign(secret, "1.5e9", body), secret, body, slack.ErrUnsigned},
		{"no secret configured", ts, slack.Sign(nil, ts, body), nil, body, slack.ErrUnsigned},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := slack.Verify(c.secret, c.ts, c.sig, c.body, now); !errors.Is(err, c.want) {
				t.Errorf("Verify = %v, want %v", err, c.want)
			}
		})
	}
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'f' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// TestErrStaleSaysWindow: the refusal says the window slack.Window is.
func TestErrStaleSaysWindow(t *testing.T) {
	if want := fmt.Sprintf("%d-minute window", int(slack.Window/time.Minute)); !strings.Contains(slack.ErrStale.Error(), want) {
		t.Errorf("ErrStale = %q, want it to say %q", slack.ErrStale, want)
	}
}
