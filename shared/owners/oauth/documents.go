package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/useprickle/prickle/shared/auth/oauthstate"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"sync"
	"syscall"
	"time"
)

// Bounds of the client ID metadata document fetcher.
const (
	maxDocument     = 10 << 10
	documentTimeout = 5 * time.Second
	documentTTL     = 5 * time.Minute
	maxDocuments    = 1000
)

// Documents fetches client ID metadata documents: the client_id is an
// https URL whose JSON says the client's name and redirect URIs. It is
// SSRF-safe: https only, the address checked after DNS resolution (no
// address that is not global unicast, see PublicAddress; DNS
// rebinding meets the same check at connect time), no redirects, no proxy,
// a size and a time bound, and a cache so one client costs one fetch.
type Documents struct {
	client *http.Client
	// loopbackHTTP allows http://127.0.0.1:<port>/… (the e2e's local-dev
	// setting, PRICKLE_OAUTH_LOOPBACK_DOCUMENTS); never on in the cloud.
	loopbackHTTP bool
	now          func() time.Time
	mu           sync.Mutex
	cache        map[string]cachedDocument
}

type cachedDocument struct {
	client  oauthstate.Client
	expires time.Time
}

// NewDocuments builds the fetcher; loopbackHTTP is for local development only.
func NewDocuments(loopbackHTTP bool) *Documents {
	d := &Documents{loopbackHTTP: loopbackHTTP, now: time.Now, cache: map[string]cachedDocument{}}
	dialer := &net.Dialer{Timeout: documentTimeout, Control: d.checkDial}
	d.client = &http.Client{
		Timeout: documentTimeout,
		Transport: &http.Transport{
			Proxy: nil, DialContext: dialer.DialContext, TLSHandshakeTimeout: documentTimeout,
			ResponseHeaderTimeout: documentTimeout, MaxResponseHeaderBytes: 8 << 10, DisableKeepAlives: true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return errors.New("redirects are not followed") },
	}
	return d
}

// IsDocumentID reports whether a client_id is a URL (a metadata document)
// rather than an id Prickle registered.
func IsDocumentID(id string) bool {
	u, err := url.Parse(id)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http")
}

// ErrForbiddenAddress means a document's host resolved to an address Prickle never connects to.
var ErrForbiddenAddress = errors.New("the client ID's host resolves to a private, loopback or link-local address")

// checkDial runs on every connection, after DNS resolution, with the address dialled.
func (d *Documents) checkDial(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("dial %s: %w", address, ErrForbiddenAddress)
	}
	ip := ap.Addr().Unmap()
	if d.loopbackHTTP && ip == netip.MustParseAddr("127.0.0.1") {
		return nil
	}
	if !PublicAddress(ip) {
		return ErrForbiddenAddress
	}
	return nil
}

// nonPublic4 are the IPv4 special-purpose blocks (IANA's registry) no
// document is fetched from: this network, private, shared (CGNAT),
// loopback, link-local, IETF protocol assignments, documentation, the 6to4
// relay, benchmarking, multicast and reserved (with the broadcast address).
var nonPublic4 = prefixes("0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
	"172.16.0.0/12", "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16", "198.18.0.0/15",
	"198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4")

// global6 is IPv6 global unicast; every other IPv6 address is refused:
// loopback, unique local, link and site local, multicast, IPv4-compatible,
// and both NAT64 prefixes (64:ff9b::/96, 64:ff9b:1::/48), which a
// translator turns into any IPv4 address, private ones included.
var global6 = netip.MustParsePrefix("2000::/3")

// nonPublic6 are the blocks inside global6 that are refused too: IETF
// protocol assignments (Teredo's 2001::/32 among them), documentation, and
// 6to4, since Teredo and 6to4 addresses carry an IPv4 address of any kind.
var nonPublic6 = prefixes("2001::/23", "2001:db8::/32", "2002::/16", "3fff::/20")

func prefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

func inAny(ps []netip.Prefix, ip netip.Addr) bool {
	for _, p := range ps {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// PublicAddress reports whether ip is a globally routable unicast address
// (an IPv4-mapped IPv6 address is judged as its IPv4 address).
func PublicAddress(ip netip.Addr) bool {
	ip = ip.Unmap()
	switch {
	case !ip.IsValid() || ip.Zone() != "":
		return false
	case ip.Is4():
		return !inAny(nonPublic4, ip)
	}
	return global6.Contains(ip) && !inAny(nonPublic6, ip)
}

// checkID refuses a client_id URL before any fetch: https (or the local
// loopback http), a path, no fragment, no credentials, bounded.
func (d *Documents) checkID(id string) (*url.URL, error) {
	if len(id) > maxRedirectURI {
		return nil, errors.New("the client ID URL is too long")
	}
	u, err := url.Parse(id)
	if err != nil || u.Host == "" || u.User != nil || u.Fragment != "" || u.Path == "" || u.Path == "/" {
		return nil, errors.New("the client ID must be an https URL with a path, no fragment and no credentials")
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && d.loopbackHTTP && u.Hostname() == "127.0.0.1":
	default:
		return nil, errors.New("the client ID URL must be https")
	}
	if ip, err := netip.ParseAddr(u.Hostname()); err == nil && !(d.loopbackHTTP && ip.String() == "127.0.0.1") && !PublicAddress(ip) {
		return nil, ErrForbiddenAddress
	}
	return u, nil
}

// oauthstate.Client fetches (or takes from the cache) the document of a client_id URL.
func (d *Documents) Client(ctx context.Context, id string) (oauthstate.Client, error) {
	u, err := d.checkID(id)
	if err != nil {
		return oauthstate.Client{}, err
	}
	d.mu.Lock()
	c, ok := d.cache[id]
	d.mu.Unlock()
	if ok && d.now().Before(c.expires) {
		return c.client, nil
	}
	client, err := d.fetch(ctx, u, id)
	if err != nil {
		return oauthstate.Client{}, err
	}
	d.mu.Lock()
	if len(d.cache) >= maxDocuments {
		clear(d.cache)
	}
	d.cache[id] = cachedDocument{client: client, expires: d.now().Add(documentTTL)}
	d.mu.Unlock()
	return client, nil
}

// document is the part of a client ID metadata document Prickle reads.
type document struct {
	ClientID string `json:"client_id"`
	registrationRequest
}

func (d *Documents) fetch(ctx context.Context, u *url.URL, id string) (oauthstate.Client, error) {
	ctx, cancel := context.WithTimeout(ctx, documentTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return oauthstate.Client{}, fmt.Errorf("client ID document request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := d.client.Do(req)
	if err != nil {
		if errors.Is(err, ErrForbiddenAddress) {
			return oauthstate.Client{}, ErrForbiddenAddress
		}
		return oauthstate.Client{}, fmt.Errorf("fetch client ID document: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return oauthstate.Client{}, fmt.Errorf("fetch client ID document: HTTP %d", resp.StatusCode)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "application/json" {
		return oauthstate.Client{}, errors.New("the client ID document is not application/json")
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDocument+1))
	if err != nil {
		return oauthstate.Client{}, fmt.Errorf("read client ID document: %w", err)
	}
	if len(body) > maxDocument {
		return oauthstate.Client{}, fmt.Errorf("the client ID document is larger than %d bytes", maxDocument)
	}
	var doc document
	if err := json.Unmarshal(body, &doc); err != nil {
		return oauthstate.Client{}, errors.New("the client ID document is not a JSON object")
	}
	if doc.ClientID != id {
		return oauthstate.Client{}, errors.New("the document's client_id is not its own URL")
	}
	c, merr := validateRegistration(doc.registrationRequest)
	if merr != nil {
		return oauthstate.Client{}, errors.New(merr.msg)
	}
	c.ID, c.Registration, c.CreatedAt = id, oauthstate.RegisteredByDocument, d.now().UTC()
	return c, nil
}
