package oauth

import (
	"context"
	"errors"
	"net/netip"
	"testing"
)

func TestPublicAddress(t *testing.T) {
	for _, c := range []struct {
		ip   string
		want bool
	}{
		{"93.184.215.14", true}, {"2606:2800:21f:cb07:6820:80da:af6b:8b2c", true},
		{"10.1.2.3", false}, {"172.16.0.1", false}, {"192.168.1.1", false}, {"127.0.0.1", false}, {"::1", false},
		{"169.254.169.254", false}, {"fe80::1", false}, {"fc00::1", false}, {"100.64.0.1", false}, {"0.0.0.0", false},
		{"::ffff:10.0.0.1", false}, {"64:ff9b::a00:1", false}, {"224.0.0.1", false},
	} {
		if got := PublicAddress(netip.MustParseAddr(c.ip)); got != c.want {
			t.Errorf("PublicAddress(%s) = %v, want %v", c.ip, got, c.want)
		}
	}
}

// TestDocumentIDsRefusedBeforeFetching: the URL rules hold before any
// connection; loopback http only with the local-dev setting.
func TestDocumentIDsRefusedBeforeFetching(t *testing.T) {
	strict, local := NewDocuments(false), NewDocuments(true)
	for _, id := range []string{"http://example.com/c.json", "https://example.com", "https://example.com/", "https://u:p@example.com/c.json",
		"https://example.com/c.json#x", "https://10.0.0.1/c.json", "https://[fe80::1]/c.json", "ftp://example.com/c.json", "http://127.0.0.1:8080/c.json"} {
		if _, err := strict.Client(context.Background(), id); err == nil {
			t.Errorf("%s accepted", id)
		}
	}
	if _, err := local.checkID("http://127.0.0.1:8080/c.json"); err != nil {
		t.Errorf("loopback with the local setting: %v", err)
	}
	if _, err := local.checkID("http://10.0.0.1:8080/c.json"); err == nil {
		t.Error("a private http address with the local setting was accepted")
	}
	// A name that resolves to loopback is refused when dialled.
	if _, err := strict.Client(context.Background(), "https://localhost:1/c.json"); !errors.Is(err, ErrForbiddenAddress) {
		t.Errorf("https://localhost: err = %v, want ErrForbiddenAddress", err)
	}
}
