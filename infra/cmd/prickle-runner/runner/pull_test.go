package runner

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/useprickle/prickle/shared/domain/wakeup"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// pullRunner takes what the puller offers, keeps it once and finishes it at
// once, as a run that ended by itself would.
type pullRunner struct {
	mu     sync.Mutex
	got    []wakeup.Payload
	free   int
	next   []time.Time
	ackErr []error
}

func (p *pullRunner) Offer(_ string, w wakeup.Payload, _ string, hold Hold) Offered {
	p.mu.Lock()
	p.got = append(p.got, w)
	p.mu.Unlock()
	before := hold.Next()
	keepErr := hold.Keep(context.Background())
	err := errors.Join(keepErr, hold.Done(context.Background()))
	p.mu.Lock()
	p.next = append(p.next, before, hold.Next())
	p.ackErr = append(p.ackErr, err)
	p.mu.Unlock()
	return Taken
}

func (p *pullRunner) Free() int { return p.free }

// fakePrickle serves the claim/ack contract with scripted answers per claim call.
type fakePrickle struct {
	mu       sync.Mutex
	claims   []int // status per claim call; after the list, 200 with nothing
	wakeups  []Claimed
	acked    []string
	extended []string
	ackCode  int
	bodies   []map[string]int
	tokens   []string
}

func (f *fakePrickle) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tokens = append(f.tokens, r.Header.Get("Authorization"))
	switch r.URL.Path {
	case ClaimPath:
		var b map[string]int
		_ = json.NewDecoder(r.Body).Decode(&b)
		f.bodies = append(f.bodies, b)
		code := http.StatusOK
		if len(f.claims) > 0 {
			code, f.claims = f.claims[0], f.claims[1:]
		}
		if code != http.StatusOK {
			w.WriteHeader(code)
			return
		}
		out := f.wakeups
		f.wakeups = nil
		_ = json.NewEncoder(w).Encode(map[string]any{"wakeups": append([]Claimed{}, out...)})
	case AckPath:
		var b struct{ ID, Claim string }
		_ = json.NewDecoder(r.Body).Decode(&b)
		f.acked = append(f.acked, b.ID+"/"+b.Claim)
		w.WriteHeader(f.ackCode)
	case ExtendPath:
		var b struct{ ID, Claim string }
		_ = json.NewDecoder(r.Body).Decode(&b)
		f.extended = append(f.extended, b.ID+"/"+b.Claim)
		if f.ackCode != http.StatusNoContent {
			w.WriteHeader(f.ackCode)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]string{"visible_until": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
	default:
		http.NotFound(w, r)
	}
}

func newPuller(url string, r *pullRunner) *Puller {
	p := NewPuller(url, "prk_a_agent", 0, r, slog.New(slog.NewJSONHandler(io.Discard, nil)))
	p.MinBackoff, p.MaxBackoff, p.Idle = time.Millisecond, 4*time.Millisecond, time.Millisecond
	return p
}

func TestPullerClaimsOffersKeepsAndAcks(t *testing.T) {
	d := wakeup.Payload{TaskID: "t1", RunID: "run_1", RunToken: "prk_r_1", Reason: wakeup.ReasonTaskRouted}
	visible := time.Now().Add(10 * time.Second)
	f := &fakePrickle{claims: []int{500, 503, 429, 200}, ackCode: http.StatusNoContent, wakeups: []Claimed{
		{ID: "wk_1", Claim: "c1", Delivery: d, VisibleUntil: visible.UTC().Format(time.RFC3339)},
		{ID: "", Claim: "c2", Delivery: d}, // malformed: skipped
	}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	r := &pullRunner{free: 3}
	p := newPuller(srv.URL, r)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	waitFor(t, "the claimed wake-up", func() bool { r.mu.Lock(); defer r.mu.Unlock(); return len(r.ackErr) == 1 })
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run = %v", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(r.got) != 1 || r.got[0] != d || r.ackErr[0] != nil {
		t.Errorf("offered %+v acks %v", r.got, r.ackErr)
	}
	if len(f.acked) != 1 || f.acked[0] != "wk_1/c1" || len(f.extended) != 1 || f.extended[0] != "wk_1/c1" {
		t.Errorf("extended %v, acked %v", f.extended, f.acked)
	}
	// A claim is kept halfway through its visibility: before the 10 s claim
	// ends, and after the hour an extension gave, well into it.
	if first, kept := r.next[0], r.next[1]; !first.Before(visible) || kept.Before(time.Now().Add(20*time.Minute)) {
		t.Errorf("keep due at %v for a claim visible until %v, then at %v after an hour's extension", first, visible, kept)
	}
	if len(f.bodies) < 4 || f.bodies[0]["max"] != 3 || f.bodies[0]["wait_seconds"] != 0 {
		t.Errorf("claims %v: retried after 500, 503 and 429, asking for the free slots", f.bodies)
	}
	for _, tok := range f.tokens {
		if tok != "Bearer prk_a_agent" {
			t.Errorf("Authorization %q", tok)
		}
	}
}

func TestPullerStops(t *testing.T) {
	for _, tt := range []struct {
		code int
		want error
	}{{401, ErrUnauthorized}, {403, ErrUnauthorized}, {404, ErrNoPull}} {
		f := &fakePrickle{claims: []int{tt.code}}
		srv := httptest.NewServer(f)
		err := newPuller(srv.URL, &pullRunner{free: 1}).Run(context.Background())
		srv.Close()
		if !errors.Is(err, tt.want) {
			t.Errorf("HTTP %d: Run = %v, want %v", tt.code, err, tt.want)
		}
	}
}

func TestPullerAckAndExtend(t *testing.T) {
	for _, tt := range []struct {
		code int
		want error
	}{{204, nil}, {409, ErrStaleClaim}, {404, ErrUnknownWake}} {
		f := &fakePrickle{ackCode: tt.code}
		srv := httptest.NewServer(f)
		p := newPuller(srv.URL, &pullRunner{})
		err := p.Ack(context.Background(), "wk_1", "c1")
		_, extendErr := p.Extend(context.Background(), "wk_1", "c1")
		rc := p.receipt(Claimed{ID: "wk_1", Claim: "c1", VisibleUntil: time.Now().Add(time.Minute).Format(time.RFC3339)})
		keepErr := rc.Keep(context.Background())
		srv.Close()
		if !errors.Is(err, tt.want) || !errors.Is(extendErr, tt.want) || !errors.Is(keepErr, tt.want) {
			t.Errorf("HTTP %d: Ack = %v, Extend = %v, Keep = %v, want %v", tt.code, err, extendErr, keepErr, tt.want)
		}
		// A claim another runner took over is not kept any more.
		if tt.want != nil && !rc.Next().IsZero() {
			t.Errorf("HTTP %d: the receipt is still kept (next %v)", tt.code, rc.Next())
		}
	}
}

func TestPullerClaimsNothingWithoutAFreeSlot(t *testing.T) {
	f := &fakePrickle{}
	srv := httptest.NewServer(f)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := newPuller(srv.URL, &pullRunner{free: 0}).Run(ctx); err != nil {
		t.Fatal(err)
	}
	if len(f.bodies) != 0 {
		t.Errorf("claimed %v with no free slot", f.bodies)
	}
}
