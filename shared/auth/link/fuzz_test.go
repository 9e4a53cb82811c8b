package link

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"
)

// FuzzVerify: any string as an approval-link token. Verify never panics;
// a token it accepts has well-formed, unexpired claims, is the one spelling
// of its bytes (strict base64url: re-encoding gives the token back), and its
// claims signed again verify to the same claims; the form token check
// never accepts what FormToken did not make.
func FuzzVerify(f *testing.F) {
	s := Signer{Key: key}
	exp := now.Add(time.Hour)
	for _, c := range []Claims{
		ForStep("tsk_1", "stp_1", "alice", exp),
		ForStep("tsk_1", "stp_1", "alice", exp).DeliveredBy(ViaSlack),
		ForResult("tsk_2", "2026-11-29T09:00:00Z", "bob", now).DeliveredBy(ViaEmail),
		ForStep("tsk_1", "stp_1", "alice", now.Add(-time.Hour)),
	} {
		tok := s.Sign(c)
		f.Add(tok, s.FormToken(tok))
		f.Add(tok+"=", "")
		f.Add(strings.ToUpper(tok), tok)
	}
	for _, junk := range []string{"", ".", "a.b", "!!!.???", "e30.e30", "eyJraW5kIjoic3RlcCJ9.AAAA", strings.Repeat("A", 5000) + "." + strings.Repeat("B", 43)} {
		f.Add(junk, junk)
	}
	f.Fuzz(func(t *testing.T, token, form string) {
		c, err := s.Verify(token, now)
		if err == nil {
			if !c.wellFormed() || !now.Before(c.Expires) {
				t.Fatalf("Verify accepted %q with claims %+v", token, c)
			}
			b64 := base64.RawURLEncoding.Strict()
			payload, sig, _ := strings.Cut(token, ".")
			body, _ := b64.DecodeString(payload)
			mac, _ := b64.DecodeString(sig)
			if b64.EncodeToString(body) != payload || b64.EncodeToString(mac) != sig {
				t.Fatalf("Verify accepted %q, which is not the one spelling of its bytes", token)
			}
			again, err := s.Verify(s.Sign(c), now)
			if err != nil || again != c {
				t.Fatalf("claims %+v signed again verify as %+v (%v)", c, again, err)
			}
		}
		if s.CheckFormToken(token, form) && form != s.FormToken(token) {
			t.Fatalf("CheckFormToken(%q, %q) accepted a value FormToken does not make", token, form)
		}
	})
}
