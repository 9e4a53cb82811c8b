package session

import (
	"net"
	"net/http"
	"time"
)

// Sign-in links are asked for on a public form, so each request is counted
// three ways per SignInWindow. The per-client bounds come first, so a
// stranger who asks too often uses up only the stranger's own allowance;
// the per-name bound, counted last, caps how many links one owner can be
// sent at all, whoever asks.
const (
	SignInWindow = 15 * time.Minute
	// RequestsPerClient bounds what one client asks, whatever the names.
	RequestsPerClient = 30
	// LinksPerNamePerClient bounds what one client asks for one name: a
	// stranger's five requests for alice stop the stranger, not alice.
	LinksPerNamePerClient = 5
	// LinksPerName bounds the links one name is sent, from every client together.
	LinksPerName = 20
)

// SignInLimit names the bound a sign-in request hit; WithinLimits is none.
type SignInLimit string

// The bounds a sign-in request can hit.
const (
	WithinLimits        SignInLimit = ""
	ClientLimit         SignInLimit = "client"
	NameFromClientLimit SignInLimit = "name_from_client"
	NameLimit           SignInLimit = "name"
)

// Client is the key a request's sign-in allowance is counted under: its
// source address as the server saw it (behind API Gateway, the event's
// requestContext.identity.sourceIp, which the Lambda adapter puts in
// RemoteAddr). X-Forwarded-For is never read: API Gateway appends to what
// the client sent, so its first entry is whatever the client chose. An IPv6
// address counts as its /64, the block one subscriber usually holds, so
// rotating addresses inside it does not buy a new allowance.
func Client(r *http.Request) string {
	host := r.RemoteAddr
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return "unknown"
	}
	if v4 := ip.To4(); v4 != nil {
		return v4.String()
	}
	return (&net.IPNet{IP: ip.Mask(net.CIDRMask(64, 128)), Mask: net.CIDRMask(64, 128)}).String()
}
