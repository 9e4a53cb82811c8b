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
		// IPv4 special-purpose blocks (RFC 6890 and its updates).
		{"198.18.0.1", false}, {"198.19.255.254", false}, {"240.0.0.1", false}, {"255.255.255.255", false},
		{"192.0.0.8", false}, {"192.0.2.1", false}, {"198.51.100.1", false}, {"203.0.113.1", false},
		{"192.88.99.1", false}, {"0.1.2.3", false}, {"198.17.255.255", true}, {"198.20.0.1", true},
		// IPv6 outside 2000::/3 or reserved inside it, and prefixes that wrap an IPv4 address.
		{"fec0::1", false}, {"2002:7f00:1::1", false}, {"2002:a00:1::1", false}, {"2002:5db8:d70e::1", false},
		{"2001::1", false}, {"2001:0:4136:e378:8000:63bf:3fff:fdd2", false}, {"2001:db8::1", false},
		{"64:ff9b:1::a00:1", false}, {"64:ff9b::7f00:1", false}, {"64:ff9b::5db8:d70e", false},
		{"::a00:1", false}, {"::7f00:1", false}, {"100::1", false}, {"3fff::1", false}, {"5f00::1", false},
		{"2001:4860:4860::8888", true}, {"2a00:1450:4001:82b::200e", true},
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
		"https://example.com/c.json#x", "https://10.0.0.1/c.json", "https://[fe80::1]/c.json", "ftp://example.com/c.json", "http://127.0.0.1:8080/c.json",
		"https://198.18.0.1/c.json", "https://240.0.0.1/c.json", "https://[fec0::1]/c.json", "https://[2002:7f00:1::1]/c.json",
		"https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/c.json", "https://[64:ff9b:1::a00:1]/c.json"} {
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
	// Whatever a name resolves to is checked when dialled.
	for _, addr := range []string{"198.18.0.1:443", "[2002:a00:1::1]:443", "[2001::1]:443", "[64:ff9b::a00:1]:443", "[::ffff:192.0.0.8]:443"} {
		if err := strict.checkDial("tcp", addr, nil); !errors.Is(err, ErrForbiddenAddress) {
			t.Errorf("dial %s: err = %v, want ErrForbiddenAddress", addr, err)
		}
	}
	if err := strict.checkDial("tcp", "93.184.215.14:443", nil); err != nil {
		t.Errorf("dial a public address: %v", err)
	}
	// A name that resolves to loopback is refused when dialled.
	if _, err := strict.Client(context.Background(), "https://localhost:1/c.json"); !errors.Is(err, ErrForbiddenAddress) {
		t.Errorf("https://localhost: err = %v, want ErrForbiddenAddress", err)
	}
}
