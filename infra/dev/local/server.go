package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/useprickle/prickle/shared/jobs/runnerapi"
)

// Bounds of the local stack's connections: request headers and a request's
// body each get their own time to arrive, a keep-alive connection may idle
// so long, and an answer must be written within writeTimeout of the request,
// which leaves room for a body and then a long poll of POST /runner/claim
// (runnerapi.MaxWait) before it answers.
const (
	headerTimeout = 10 * time.Second
	bodyTimeout   = 10 * time.Second
	idleTimeout   = 30 * time.Second
	writeTimeout  = bodyTimeout + runnerapi.MaxWait*time.Second + 10*time.Second
)

// newServer is the local stack's HTTP server for handler, listening on
// port: every route answers loopback Hosts only (loopbackHost) and bounds
// its body (bodyDeadline), within the server's header, write and idle bounds.
func newServer(handler http.Handler, port string) *http.Server {
	return &http.Server{
		Handler:           loopbackHost(port, bodyDeadline(handler)),
		ReadHeaderTimeout: headerTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
	}
}

// loopbackHost serves only requests whose Host is a loopback name or
// address with the stack's port: a page that rebinds its own name to
// 127.0.0.1 (DNS rebinding) sends its own name as Host and gets 403, so it
// reads nothing of the stack (the dev outbox's links and tokens, the pages).
func loopbackHost(port string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, p, err := net.SplitHostPort(r.Host)
		if err != nil || p != port || !loopbackName(host) {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Header().Set("X-Content-Type-Options", "nosniff")
			w.WriteHeader(http.StatusForbidden)
			_, _ = fmt.Fprintf(w, "forbidden: Prickle's local stack answers requests for 127.0.0.1:%s or localhost:%s only, not for Host %q\n", port, port, r.Host)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func loopbackName(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Zone() == "" && ip.Unmap().IsLoopback()
}

// bodyDeadline gives a request's body bodyTimeout to arrive: past it, the
// body's reads fail and the connection is closed. The deadline is lifted
// once the body has been read, so a handler that then waits (a long poll)
// keeps its connection until it answers.
func bodyDeadline(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody {
			rc := http.NewResponseController(w)
			if err := rc.SetReadDeadline(time.Now().Add(bodyTimeout)); err != nil {
				http.Error(w, "the request body could not be bounded", http.StatusInternalServerError)
				return
			}
			r.Body = &deadlineBody{ReadCloser: r.Body, lift: func() { _ = rc.SetReadDeadline(time.Time{}) }}
		}
		next.ServeHTTP(w, r)
	})
}

// deadlineBody lifts the read deadline when its body ends, and only then: a
// body that failed (its deadline passed) leaves it, so the connection closes.
type deadlineBody struct {
	io.ReadCloser
	lift func()
	once sync.Once
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, io.EOF) {
		b.once.Do(b.lift)
	}
	return n, err
}
