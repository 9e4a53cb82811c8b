package storetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
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
)

// Faults lists every fault kind the proxy injects.
var Faults = []Fault{ProvisionedThroughputExceeded, Throttling, InternalServerError, Timeout, TransactionThrottled}

// Rule injects a fault into the requests of one operation (every operation
// when Op is empty): the next Times of them, or all of them when Times is 0.
// With Every above 1, only one request in Every of them (the Every-th, the
// 2×Every-th, …) gets it, and Times counts those.
type Rule struct {
	Fault Fault
	Op    string // e.g. "TransactWriteItems", as X-Amz-Target names it
	Times int
	Every int
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
}

type activeRule struct {
	Rule
	left int // requests still to fail; -1 for all of them
	seen int // requests the rule matched, for Every
}

// NewProxy starts a proxy in front of the emulator, closed when the test ends.
func NewProxy(t testing.TB) *Proxy {
	t.Helper()
	target, err := url.Parse(Endpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{ops: map[string]int{}, injected: map[Fault]int{}}
	forward := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, op, _ := strings.Cut(r.Header.Get("X-Amz-Target"), ".")
		if op == "TransactWriteItems" && p.dropsTokens() {
			dropToken(r)
		}
		if f, ok := p.count(op); ok {
			if f == LostAnswer {
				forward.ServeHTTP(httptest.NewRecorder(), r)
			}
			p.answer(w, r, f)
			return
		}
		forward.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
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

func (p *Proxy) count(op string) (Fault, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ops[op]++
	for _, r := range p.rules {
		if r.left == 0 || (r.Op != "" && r.Op != op) || (r.Fault == TransactionThrottled && op != "TransactWriteItems") {
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
