package link

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/auth/signed"
)

var (
	key = []byte("0123456789abcdef0123456789abcdef")
	now = time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
)

func TestSignVerify(t *testing.T) {
	s := Signer{Key: key}
	step := ForStep("tsk_1", "stp_1", "alice", now.Add(24*time.Hour))
	result := ForResult("tsk_2", "2026-11-29T09:00:00Z", "bob", now)
	capped := ForCap("alice/writer", "2026-11-29", "alice", time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC))
	other := Signer{Key: []byte("another key that is 32 bytes lon")}

	flip := func(tok string, i int) string {
		b := []byte(tok)
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		return string(b)
	}
	resign := func(body string) string { // a forged payload with a copied signature
		tok := s.Sign(step)
		_, sig, _ := strings.Cut(tok, ".")
		return base64.RawURLEncoding.EncodeToString([]byte(body)) + "." + sig
	}
	tests := []struct {
		name    string
		token   string
		at      time.Time
		want    Claims
		wantErr error
	}{
		{"step link", s.Sign(step), now, step, nil},
		{"result link", s.Sign(result), now.Add(ResultLifetime - time.Second), result, nil},
		{"cap link until the day ends", s.Sign(capped), capped.Expires.Add(-time.Second), capped, nil},
		{"cap link the next day", s.Sign(capped), capped.Expires, capped, ErrExpired},
		{"step link at its deadline", s.Sign(step), step.Expires, step, ErrExpired},
		{"result link after 7 days", s.Sign(result), now.Add(ResultLifetime), result, ErrExpired},
		{"payload changed", flip(s.Sign(step), 5), now, Claims{}, ErrTampered},
		{"signature changed", flip(s.Sign(step), len(s.Sign(step))-3), now, Claims{}, ErrTampered},
		{"forged payload", resign(`{"kind":"step","task_id":"tsk_1","step_id":"stp_1","owner":"mallory","exp":"2030-01-01T00:00:00Z"}`), now, Claims{}, ErrTampered},
		{"other key", other.Sign(step), now, Claims{}, ErrTampered},
		{"no dot", strings.ReplaceAll(s.Sign(step), ".", ""), now, Claims{}, ErrTampered},
		{"empty", "", now, Claims{}, ErrTampered},
		{"two parts of junk", "abc.def", now, Claims{}, ErrTampered},
		{"not base64", "!!!.???", now, Claims{}, ErrTampered},
		{"extra part", s.Sign(step) + ".x", now, Claims{}, ErrTampered},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.Verify(tt.token, tt.at)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			got.Nonce = ""
			if got != tt.want {
				t.Errorf("claims = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestMalformedClaimsAreTampered(t *testing.T) {
	s := Signer{Key: key}
	exp := now.Add(time.Hour)
	for name, c := range map[string]Claims{
		"unknown kind":      {Kind: "task", TaskID: "t", Holder: signed.Holder{Owner: "o", Expires: exp}},
		"step without id":   {Kind: KindStep, TaskID: "t", Holder: signed.Holder{Owner: "o", Expires: exp}},
		"result with step":  {Kind: KindResult, TaskID: "t", StepID: "s", Holder: signed.Holder{Owner: "o", Expires: exp}},
		"no owner":          {Kind: KindResult, TaskID: "t", Holder: signed.Holder{Expires: exp}},
		"no task":           {Kind: KindResult, Holder: signed.Holder{Owner: "o", Expires: exp}},
		"no expiry":         {Kind: KindResult, TaskID: "t", Holder: signed.Holder{Owner: "o"}},
		"cap without day":   {Kind: KindCap, Agent: "o/a", Holder: signed.Holder{Owner: "o", Expires: exp}},
		"cap without agent": {Kind: KindCap, Day: "2026-11-29", Holder: signed.Holder{Owner: "o", Expires: exp}},
		"cap with a task":   {Kind: KindCap, Agent: "o/a", Day: "2026-11-29", TaskID: "t", Holder: signed.Holder{Owner: "o", Expires: exp}},
		"step without task": {Kind: KindStep, StepID: "s", Holder: signed.Holder{Owner: "o", Expires: exp}},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := s.Verify(s.Sign(c), now); !errors.Is(err, ErrTampered) {
				t.Errorf("err = %v, want ErrTampered", err)
			}
		})
	}
}

func TestTokensAreDistinctAndURLSafe(t *testing.T) {
	s := Signer{Key: key}
	c := ForStep("tsk_1", "stp_1", "alice", now.Add(time.Hour))
	a, b := s.Sign(c), s.Sign(c)
	if a == b {
		t.Error("two signatures of the same claims are equal: the nonce is missing")
	}
	for _, tok := range []string{a, b} {
		if strings.ContainsAny(tok, "+/=?#&% ") {
			t.Errorf("token %q is not URL-safe", tok)
		}
	}
	if got := URL("https://app.example.com/", a); got != "https://app.example.com/a/"+a {
		t.Errorf("URL = %q", got)
	}
}

func TestFormToken(t *testing.T) {
	s := Signer{Key: key}
	tok := s.Sign(ForResult("tsk_1", "r1", "alice", now))
	tests := []struct {
		name  string
		token string
		value string
		want  bool
	}{
		{"matching", tok, s.FormToken(tok), true},
		{"other token", s.Sign(ForResult("tsk_2", "r1", "alice", now)), s.FormToken(tok), false},
		{"empty", tok, "", false},
		{"junk", tok, "%%%", false},
		{"the link signature itself", tok, tok[strings.Index(tok, ".")+1:], false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := s.CheckFormToken(tt.token, tt.value); got != tt.want {
				t.Errorf("CheckFormToken = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestNewSignerNeedsALongKey(t *testing.T) {
	tests := []struct {
		key     []byte
		wantErr bool
	}{
		{nil, true},
		{[]byte("short"), true},
		{key, false},
	}
	for _, tt := range tests {
		if _, err := NewSigner(tt.key); (err != nil) != tt.wantErr {
			t.Errorf("NewSigner(%d bytes) err = %v, wantErr %v", len(tt.key), err, tt.wantErr)
		}
	}
	if _, err := (Signer{}).Verify(Signer{}.Sign(ForResult("t", "r1", "o", now)), now); !errors.Is(err, ErrTampered) {
		t.Errorf("a signer without a key verified a token: %v", err)
	}
}

// lastCharTwin returns s with its last character replaced by one that a
// lenient base64 decoder reads as the same bytes (only the unused low bits
// differ), or false when s's length leaves no unused bits.
func lastCharTwin(s string) (string, bool) {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	unused := map[int]int{2: 4, 3: 2}[len(s)%4] // bits of the last character that carry nothing
	if unused == 0 {
		return "", false
	}
	i := strings.IndexByte(alphabet, s[len(s)-1])
	return s[:len(s)-1] + string(alphabet[i^1]), true
}

func TestLenientBase64Refused(t *testing.T) {
	s := Signer{Key: key}
	var twins int
	var payloadTwins int
	for i := range 3 { // owners of three lengths give the payload each length modulo 3
		tok := s.Sign(ForStep("tsk_1", "stp_1", "alice"+strings.Repeat("x", i), now.Add(time.Hour)))
		payload, sig, _ := strings.Cut(tok, ".")
		if twin, ok := lastCharTwin(sig); ok {
			twins++
			if _, err := s.Verify(payload+"."+twin, now); !errors.Is(err, ErrTampered) {
				t.Errorf("signature with another last character verified: %v", err)
			}
		}
		if twin, ok := lastCharTwin(payload); ok {
			payloadTwins++
			forged := twin + "." + signed.MAC(s.Key, twin)
			if _, err := s.Verify(forged, now); !errors.Is(err, ErrTampered) {
				t.Errorf("payload with another last character verified: %v", err)
			}
		}
		form := s.FormToken(tok)
		if twin, ok := lastCharTwin(form); ok {
			twins++
			if s.CheckFormToken(tok, twin) {
				t.Error("form token with another last character accepted")
			}
		}
	}
	// Found by FuzzVerify: Go's decoders skip line breaks even when strict.
	tok := s.Sign(ForStep("tsk_1", "stp_1", "alice", now.Add(time.Hour)))
	payload, sig, _ := strings.Cut(tok, ".")
	for _, broken := range []string{payload[:5] + "\n" + payload[5:] + "." + sig, payload + "." + sig[:9] + "\r\n" + sig[9:], payload + "." + sig + "\n"} {
		if _, err := s.Verify(broken, now); !errors.Is(err, ErrTampered) {
			t.Errorf("token with a line break verified: %v", err)
		}
	}
	if form := s.FormToken(tok); s.CheckFormToken(tok, form[:7]+"\n"+form[7:]) {
		t.Error("form token with a line break accepted")
	}
	if twins == 0 || payloadTwins == 0 {
		t.Fatalf("signature or form twins %d, payload twins %d: a part was not checked", twins, payloadTwins)
	}
}

// TestDeliveryIsSigned: where a link was delivered is part of what is
// signed, so a Slack link cannot be turned into an email link; only email
// is personal, and a link that names no destination counts as shared.
func TestDeliveryIsSigned(t *testing.T) {
	s := Signer{Key: key}
	base := ForStep("tsk_1", "stp_1", "alice", now.Add(time.Hour))
	for _, tc := range []struct {
		via    string
		shared bool
	}{{ViaEmail, false}, {ViaSlack, true}, {"", true}} {
		got, err := s.Verify(s.Sign(base.DeliveredBy(tc.via)), now)
		if err != nil || got.Via != tc.via || got.Shared() != tc.shared {
			t.Errorf("via %q: claims %+v (%v), shared %v, want shared %v", tc.via, got, err, got.Shared(), tc.shared)
		}
	}
	tok := s.Sign(base.DeliveredBy(ViaSlack))
	payload, sig, _ := strings.Cut(tok, ".")
	body, _ := base64.RawURLEncoding.DecodeString(payload)
	forged := base64.RawURLEncoding.EncodeToString([]byte(strings.Replace(string(body), `"via":"slack"`, `"via":"email"`, 1)))
	if forged == payload {
		t.Fatal("the payload names no via")
	}
	if _, err := s.Verify(forged+"."+sig, now); !errors.Is(err, ErrTampered) {
		t.Errorf("a Slack link rewritten to email verified: %v", err)
	}
}
