package storetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/useprickle/prickle/shared/aws/store"
)

// Fault is a failure the proxy answers instead of the emulator.
type Fault string

// The faults DynamoDB answers with when it cannot serve a request, each in
// the form DynamoDB sends it (JSON 1.0 error bodies, __type named as the
// service names its errors).
const (
	// ProvisionedThroughputExceeded is a table or index over its capacity (400).
	ProvisionedThroughputExceeded Fault = "ProvisionedThroughputExceededException"
	// Throttling is a request rate over the account's or partition's limit (400).
	Throttling Fault = "ThrottlingException"
	// InternalServerError is DynamoDB failing on its side (500).
	InternalServerError Fault = "InternalServerError"
	// Timeout is no answer at all: the request hangs until the client gives up.
	Timeout Fault = "Timeout"
	// TransactionThrottled is a TransactWriteItems cancelled with a
	// ThrottlingError reason on its first item (400); it applies to
	// TransactWriteItems only.
	TransactionThrottled Fault = "TransactionCanceledException"
	// LostAnswer is not a DynamoDB error but the network losing its answer:
	// the request reaches the emulator and is applied, and the client waits
	// for an answer until it gives up (and, under the SDK, retries). It is
	// not in Faults, whose kinds leave the data untouched.
	LostAnswer Fault = "LostAnswer"
	// ResetAnswer is LostAnswer over a connection that breaks instead of
	// hanging: the request is applied, then the proxy closes the connection
	// in place of the answer, and the SDK retries at once (a connection
	// error) rather than after its attempt deadline. The fault run of the
	// local stack (PRICKLE_LOSE_ANSWERS) loses answers this way.
	ResetAnswer Fault = "ResetAnswer"
)

// WriteOps are the operations that write, the ones Rule.Writes matches.
var WriteOps = []string{"PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems", "BatchWriteItem"}

func isWrite(op string) bool {
	for _, w := range WriteOps {
		if op == w {
			return true
		}
	}
	return false
}

// Faults lists every fault kind the proxy injects.
var Faults = []Fault{ProvisionedThroughputExceeded, Throttling, InternalServerError, Timeout, TransactionThrottled}

// Rule injects a fault into the requests of one operation (every operation
// when Op is empty): the next Times of them, or all of them when Times is 0.
// With Every above 1, only one request in Every of them (the Every-th, the
// 2×Every-th, …) gets it, and Times counts those. With Writes, the rule
// matches the write operations only (WriteOps), counted together. With
// AnswerLast, the SDK's last attempt of a call (amz-sdk-request: attempt=N;
// max=N) passes untouched and uncounted: the fault is one that the SDK's
// retry recovers, never the whole call's failure (which a rule without it,
// on every attempt, is).
type Rule struct {
	Fault      Fault
	Op         string // e.g. "TransactWriteItems", as X-Amz-Target names it
	Writes     bool
	Times      int
	Every      int
	AnswerLast bool
}

// Proxy is a reverse proxy between a store's DynamoDB client and the
// emulator: it counts the requests by the operation their X-Amz-Target
// header names and answers the faults its rules inject.
type Proxy struct {
	URL string

	mu       sync.Mutex
	ops      map[string]int
	rules    []*activeRule
	injected map[Fault]int
	noTokens bool
	totals   Totals
	closer   func()
}

// Totals are what a proxy has seen since it started: requests, writes
// among them, retries (the SDK's attempt 2 and later, from its
// amz-sdk-request header) and the answers it lost (LostAnswer and
// ResetAnswer faults).
type Totals struct {
	Requests int `json:"requests"`
	Writes   int `json:"writes"`
	Retries  int `json:"retries"`
	Lost     int `json:"answers_lost"`
}

type activeRule struct {
	Rule
	left int // requests still to fail; -1 for all of them
	seen int // requests the rule matched, for Every
}

// NewProxy starts a proxy in front of the emulator, closed when the test ends.
func NewProxy(t testing.TB) *Proxy {
	t.Helper()
	p, err := Start(Endpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// Start serves a proxy to the DynamoDB endpoint target on a free loopback
// port, with no rules yet, until Close. GET /totals on it answers its
// Totals as JSON (no DynamoDB request is a GET).
func Start(target string) (*Proxy, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, fmt.Errorf("proxy target %q: %w", target, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("proxy listen: %w", err)
	}
	p := &Proxy{ops: map[string]int{}, injected: map[Fault]int{}, URL: "http://" + ln.Addr().String()}
	srv := &http.Server{Handler: p.handler(httputil.NewSingleHostReverseProxy(u)), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	p.closer = func() { _ = srv.Close() }
	return p, nil
}

// Close stops the proxy.
func (p *Proxy) Close() { p.closer() }

func (p *Proxy) handler(forward http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/totals" {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(p.Totals())
			return
		}
		_, op, _ := strings.Cut(r.Header.Get("X-Amz-Target"), ".")
		if op == "TransactWriteItems" && p.dropsTokens() {
			dropToken(r)
		}
		if f, ok := p.count(op, retried(r), lastAttempt(r)); ok {
			switch f {
			case LostAnswer:
				forward.ServeHTTP(httptest.NewRecorder(), r)
			case ResetAnswer:
				forward.ServeHTTP(httptest.NewRecorder(), r)
				reset(w)
				return
			}
			p.answer(w, r, f)
			return
		}
		forward.ServeHTTP(w, r)
	})
}

// retried tells the SDK's retry of a request (amz-sdk-request: attempt=2; max=3).
func retried(r *http.Request) bool {
	h := r.Header.Get("Amz-Sdk-Request")
	return strings.Contains(h, "attempt=") && !strings.Contains(h, "attempt=1;") && !strings.HasSuffix(h, "attempt=1")
}

// lastAttempt tells the SDK's last attempt of a call (amz-sdk-request:
// attempt=3; max=3); a request without the header is not one.
func lastAttempt(r *http.Request) bool {
	var attempt, most int
	for _, part := range strings.Split(r.Header.Get("Amz-Sdk-Request"), ";") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		n, err := strconv.Atoi(v)
		switch {
		case err != nil:
		case k == "attempt":
			attempt = n
		case k == "max":
			most = n
		}
	}
	return attempt > 0 && attempt == most
}

// reset closes the client's connection without an answer.
func reset(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0) // a reset, not an orderly close
	}
	_ = conn.Close()
}

// Totals returns what the proxy has seen since it started.
func (p *Proxy) Totals() Totals {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.totals
}

// Store returns a store over the fixture's tables whose client talks
// through the proxy, built as the functions build theirs (opts adjust it).
func (p *Proxy) Store(fx Fixture, opts ...func(*dynamodb.Options)) *store.Store {
	return store.New(store.NewFunctionClient(p.URL, opts...), fx.Tables)
}

// DropTokens makes the proxy forward every TransactWriteItems without its
// ClientRequestToken, as to a DynamoDB that ignored it: a retried
// transaction then runs again, and only what the write itself records can
// tell that it landed.
func (p *Proxy) DropTokens() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.noTokens = true
}

func (p *Proxy) dropsTokens() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.noTokens
}

// dropToken removes ClientRequestToken from r's JSON body (the emulator
// checks no signature).
func dropToken(r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	var in map[string]json.RawMessage
	if json.Unmarshal(body, &in) == nil {
		delete(in, "ClientRequestToken")
		if out, err := json.Marshal(in); err == nil {
			body = out
		}
	}
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	r.Header.Set("Content-Length", fmt.Sprint(len(body)))
}

// Inject adds a rule; rules are tried in the order they were added.
func (p *Proxy) Inject(r Rule) {
	p.mu.Lock()
	defer p.mu.Unlock()
	left := r.Times
	if left == 0 {
		left = -1
	}
	p.rules = append(p.rules, &activeRule{Rule: r, left: left})
}

// Clear removes every rule.
func (p *Proxy) Clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rules = nil
}

// Take returns the requests counted since the last Take (all of them, and
// by operation) and starts counting again.
func (p *Proxy) Take() (int, map[string]int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	ops, n := p.ops, 0
	for _, c := range ops {
		n += c
	}
	p.ops = map[string]int{}
	return n, ops
}

// Injected returns how many requests got each fault since the last call, and starts again.
func (p *Proxy) Injected() map[Fault]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	got := p.injected
	p.injected = map[Fault]int{}
	return got
}

func (p *Proxy) count(op string, retry, last bool) (Fault, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ops[op]++
	p.totals.Requests++
	if isWrite(op) {
		p.totals.Writes++
	}
	if retry {
		p.totals.Retries++
	}
	for _, r := range p.rules {
		if r.left == 0 || (r.Op != "" && r.Op != op) || (r.Writes && !isWrite(op)) || (r.Fault == TransactionThrottled && op != "TransactWriteItems") || (r.AnswerLast && last) {
			continue
		}
		if r.Every > 1 {
			if r.seen++; r.seen%r.Every != 0 {
				continue
			}
		}
		if r.left > 0 {
			r.left--
		}
		p.injected[r.Fault]++
		if r.Fault == LostAnswer || r.Fault == ResetAnswer {
			p.totals.Lost++
		}
		return r.Fault, true
	}
	return "", false
}

// maxHang bounds a Timeout fault when the client never gives up.
const maxHang = time.Minute

func (p *Proxy) answer(w http.ResponseWriter, r *http.Request, f Fault) {
	body, _ := io.ReadAll(r.Body)
	switch f {
	case Timeout, LostAnswer:
		select {
		case <-r.Context().Done():
		case <-time.After(maxHang):
		}
		return
	case ProvisionedThroughputExceeded:
		writeError(w, http.StatusBadRequest, map[string]any{"__type": errorType(f),
			"message": "The level of configured provisioned throughput for the table was exceeded. Consider increasing your provisioning level with the UpdateTable API."})
	case Throttling:
		writeError(w, http.StatusBadRequest, map[string]any{"__type": errorType(f), "message": "Rate of requests exceeds the allowed throughput."})
	case InternalServerError:
		writeError(w, http.StatusInternalServerError, map[string]any{"__type": errorType(f), "message": "Internal server error"})
	case TransactionThrottled:
		var in struct{ TransactItems []json.RawMessage }
		_ = json.Unmarshal(body, &in)
		reasons, codes := []map[string]string{}, []string{}
		for i := range max(1, len(in.TransactItems)) {
			if i == 0 {
				reasons = append(reasons, map[string]string{"Code": "ThrottlingError", "Message": "Throughput exceeds the current capacity of your table or index. DynamoDB is automatically scaling your table or index so please try again shortly."})
				codes = append(codes, "ThrottlingError")
				continue
			}
			reasons = append(reasons, map[string]string{"Code": "None"})
			codes = append(codes, "None")
		}
		writeError(w, http.StatusBadRequest, map[string]any{"__type": errorType(f), "CancellationReasons": reasons,
			"Message": fmt.Sprintf("Transaction cancelled, please refer cancellation reasons for specific reasons [%s]", strings.Join(codes, ", "))})
	}
}

func errorType(f Fault) string { return "com.amazonaws.dynamodb.v20120810#" + string(f) }

func writeError(w http.ResponseWriter, status int, body map[string]any) {
	var b bytes.Buffer
	_ = json.NewEncoder(&b).Encode(body)
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.Header().Set("X-Amzn-RequestId", "fault-injected")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}
