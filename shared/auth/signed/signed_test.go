package signed

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

var key = []byte("0123456789abcdef0123456789abcdef")

type claims struct {
	Owner string `json:"owner"`
	N     int    `json:"n"`
}

// twin is s with its last character swapped for the one that decodes to the
// same bytes under lenient base64 (its unused trailing bits set).
func twin(s string) (string, bool) {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	if len(s)%4 == 0 || len(s)%4 == 1 {
		return "", false
	}
	i := strings.IndexByte(alphabet, s[len(s)-1])
	return s[:len(s)-1] + string(alphabet[i^1]), true
}

func TestOpen(t *testing.T) {
	tok := Sign(key, claims{Owner: "alice", N: 1})
	payload, sig, _ := strings.Cut(tok, ".")
	sigTwin, ok := twin(sig)
	if !ok {
		t.Fatalf("a SHA-256 signature has %d characters: no twin", len(sig))
	}
	forged := base64.RawURLEncoding.EncodeToString([]byte(`{"owner":"mallory","n":1}`))
	notJSON := base64.RawURLEncoding.EncodeToString([]byte("not json"))
	tests := []struct {
		name  string
		key   []byte
		token string
		want  claims
		err   error
	}{
		{"issued", key, tok, claims{Owner: "alice", N: 1}, nil},
		{"other key", []byte("another key that is 32 bytes lon"), tok, claims{}, ErrInvalid},
		{"empty key", nil, tok, claims{}, ErrInvalid},
		{"empty key, signed with it", nil, Sign(nil, claims{Owner: "alice"}), claims{}, ErrInvalid},
		{"forged payload, copied signature", key, forged + "." + sig, claims{}, ErrInvalid},
		{"signature twin", key, payload + "." + sigTwin, claims{}, ErrInvalid},
		{"line break in payload", key, payload[:4] + "\n" + payload[4:] + "." + sig, claims{}, ErrInvalid},
		{"line break after signature", key, tok + "\r\n", claims{}, ErrInvalid},
		{"signed, not JSON", key, notJSON + "." + MAC(key, notJSON), claims{}, ErrInvalid},
		{"no dot", key, payload + sig, claims{}, ErrInvalid},
		{"no payload", key, "." + sig, claims{}, ErrInvalid},
		{"no signature", key, payload + ".", claims{}, ErrInvalid},
		{"extra part", key, tok + ".x", claims{}, ErrInvalid},
		{"empty", key, "", claims{}, ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got claims
			err := Open(tt.key, tt.token, &got)
			if !errors.Is(err, tt.err) || (err == nil && got != tt.want) {
				t.Fatalf("Open = %+v, %v; want %+v, %v", got, err, tt.want, tt.err)
			}
		})
	}
}

func TestCheckMAC(t *testing.T) {
	v := MAC(key, "form:x")
	vTwin, ok := twin(v)
	if !ok {
		t.Fatalf("a SHA-256 MAC has %d characters: no twin", len(v))
	}
	tests := []struct {
		name string
		key  []byte
		msg  string
		v    string
		want bool
	}{
		{"made by MAC", key, "form:x", v, true},
		{"other message", key, "form:y", v, false},
		{"other key", []byte("another key that is 32 bytes lon"), "form:x", v, false},
		{"empty key", nil, "form:x", MAC(nil, "form:x"), false},
		{"twin spelling", key, "form:x", vTwin, false},
		{"line break", key, "form:x", v[:7] + "\n" + v[7:], false},
		{"padded", key, "form:x", v + "=", false},
		{"empty", key, "form:x", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CheckMAC(tt.key, tt.msg, tt.v); got != tt.want {
				t.Fatalf("CheckMAC(%q) = %v, want %v", tt.v, got, tt.want)
			}
		})
	}
}

func TestNonce(t *testing.T) {
	for _, n := range []int{12, 16} {
		a, b := Nonce(n), Nonce(n)
		raw, err := b64.DecodeString(a)
		if err != nil || len(raw) != n {
			t.Errorf("Nonce(%d) = %q: %d bytes (%v)", n, a, len(raw), err)
		}
		if a == b {
			t.Errorf("Nonce(%d) gave %q twice", n, a)
		}
	}
}
