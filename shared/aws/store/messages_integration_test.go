//go:build integration

package store_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/auth/oauthstate"
	"github.com/useprickle/prickle/shared/aws/store"
	"github.com/useprickle/prickle/shared/aws/store/storetest"
	"github.com/useprickle/prickle/shared/domain/modelspend"
	"github.com/useprickle/prickle/shared/team"
)

func TestSlackRefs(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	s := f.store

	if _, _, err := s.SlackRef(ctx, "tsk_1", "stp_1"); !errors.Is(err, team.ErrNotFound) {
		t.Errorf("missing ref: err = %v, want ErrNotFound", err)
	}
	if err := s.PutSlackRef(ctx, "tsk_1", "stp_1", "C0ALICE", "1700000000.000100"); err != nil {
		t.Fatal(err)
	}
	if err := s.PutSlackRef(ctx, "tsk_1", store.ResultSubject, "C0ALICE", "1700000000.000200"); err != nil {
		t.Fatal(err)
	}
	if ch, ts, err := s.SlackRef(ctx, "tsk_1", "stp_1"); err != nil || ch != "C0ALICE" || ts != "1700000000.000100" {
		t.Errorf("step ref = %s %s %v", ch, ts, err)
	}
	if ch, ts, err := s.SlackRef(ctx, "tsk_1", store.ResultSubject); err != nil || ch != "C0ALICE" || ts != "1700000000.000200" {
		t.Errorf("result ref = %s %s %v", ch, ts, err)
	}
	// A later message of the same subject replaces the ref.
	if err := s.PutSlackRef(ctx, "tsk_1", "stp_1", "C0ALICE", "1700000000.000300"); err != nil {
		t.Fatal(err)
	}
	if _, ts, _ := s.SlackRef(ctx, "tsk_1", "stp_1"); ts != "1700000000.000300" {
		t.Errorf("ref after replace = %s", ts)
	}
	if err := s.PutSlackRef(ctx, "tsk_1", "stp_1", "", "1"); err == nil {
		t.Error("a ref without a channel was stored")
	}
}

func TestClaimSendOncePerEventAndChannel(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	s := f.store
	const id = "Step Requested:tsk_1:stp_1:pending"

	// Racing deliveries of one event: exactly one claims each channel.
	var wins atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			ok, err := s.ClaimSend(ctx, id, "email", base)
			if err != nil {
				t.Error(err)
			}
			if ok {
				wins.Add(1)
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d deliveries claimed the email, want 1", wins.Load())
	}
	if ok, err := s.ClaimSend(ctx, id, "slack", base); err != nil || !ok {
		t.Errorf("slack claim = %v, %v; channels are claimed apart", ok, err)
	}
	if ok, err := s.ClaimSend(ctx, "Step Decided:tsk_1:stp_1:approved", "email", base); err != nil || !ok {
		t.Errorf("another event's claim = %v, %v", ok, err)
	}

	// A failed send is released, and the retry claims it again.
	if err := s.ReleaseSend(ctx, id, "email"); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.ClaimSend(ctx, id, "email", base); err != nil || !ok {
		t.Errorf("claim after release = %v, %v", ok, err)
	}
	if ok, _ := s.ClaimSend(ctx, id, "email", base); ok {
		t.Error("claimed twice after the release")
	}
	if err := s.ReleaseSend(ctx, "never claimed", "email"); err != nil {
		t.Errorf("releasing an unclaimed send: %v", err)
	}
	if _, err := s.ClaimSend(ctx, "", "email", base); err == nil {
		t.Error("a claim without an event id was accepted")
	}

	// Sent markers and refs stay out of the by_agent index: agent tokens still list alone.
	if n, err := s.RevokeAgentTokens(ctx, "alice/writer"); err != nil || n != 0 {
		t.Errorf("revoke tokens of an agent without any = %d, %v", n, err)
	}
}

// TestRetriedClaimThatLandedIsStillTheClaim: the network loses the answer
// to a claim that was stored, and the SDK sends it again. Before the claim
// carried its id, the retry failed its own condition and notify, told
// "already sent", sent nothing: an owner's email that never went out.
func TestRetriedClaimThatLandedIsStillTheClaim(t *testing.T) {
	fx := storetest.New(t)
	p := storetest.NewProxy(t)
	st := p.Store(fx, func(o *dynamodb.Options) {
		o.HTTPClient = awshttp.NewBuildableClient().WithTimeout(time.Second)
	})
	ctx := context.Background()
	const id = "Step Requested:tsk_lost:stp_1:pending"
	p.Inject(storetest.Rule{Fault: storetest.LostAnswer, Op: "PutItem", Times: 1})
	if ok, err := st.ClaimSend(ctx, id, "email", base); err != nil || !ok {
		t.Fatalf("a claim that landed, retried = %v, %v; want the claim", ok, err)
	}
	if got := p.Injected()[storetest.LostAnswer]; got != 1 {
		t.Fatalf("the proxy lost %d answers, want 1", got)
	}
	if _, ops := p.Take(); ops["PutItem"] != 2 {
		t.Errorf("requests %v, want the PutItem and its retry", ops)
	}
	// Another delivery's claim of the same event and channel still loses.
	if ok, err := st.ClaimSend(ctx, id, "email", base); err != nil || ok {
		t.Errorf("another delivery's claim = %v, %v; want already claimed", ok, err)
	}
}

// TestRetriedTokenPutThatLandedIsStillTheToken: the answer to a token's put
// is lost and the SDK sends it again; the retry carries the put's own id and
// must not report a conflict (an operator's mint-token failed so on a loaded
// machine), while another put of that hash still conflicts.
func TestRetriedTokenPutThatLandedIsStillTheToken(t *testing.T) {
	fx := storetest.New(t)
	p := storetest.NewProxy(t)
	st := p.Store(fx, func(o *dynamodb.Options) {
		o.HTTPClient = awshttp.NewBuildableClient().WithTimeout(time.Second)
	})
	ctx := context.Background()
	tok := identity.Token{Kind: identity.KindAgent, Agent: "alice/writer", Hash: identity.Hash("prk_a_lost_answer"), CreatedAt: base}
	p.Inject(storetest.Rule{Fault: storetest.LostAnswer, Op: "PutItem", Times: 1})
	if err := st.PutToken(ctx, tok); err != nil {
		t.Fatalf("a put that landed, retried = %v; want the token stored", err)
	}
	if got := p.Injected()[storetest.LostAnswer]; got != 1 {
		t.Fatalf("the proxy lost %d answers, want 1", got)
	}
	if got, err := st.TokenByHash(ctx, tok.Hash); err != nil || got.Agent != "alice/writer" {
		t.Fatalf("stored token = %+v, %v", got, err)
	}
	other := tok
	other.Agent = "bob/reviewer"
	if err := st.PutToken(ctx, other); !errors.Is(err, team.ErrConflict) {
		t.Errorf("another token with that hash = %v; want a conflict", err)
	}
}

// A put of a new key (a marker, a registration) whose answer was lost and
// which the SDK retried is still the first: the retry finds its own item,
// not someone else's. A second put of that key is still refused.
func TestRetriedNewKeyPutThatLandedIsStillFirst(t *testing.T) {
	fx := storetest.New(t)
	p := storetest.NewProxy(t)
	st := p.Store(fx, func(o *dynamodb.Options) {
		o.HTTPClient = awshttp.NewBuildableClient().WithTimeout(time.Second)
	})
	ctx := context.Background()
	p.Inject(storetest.Rule{Fault: storetest.LostAnswer, Op: "PutItem", Times: 1})
	first, err := st.FirstSlackRequest(ctx, "1733220000:v0=lost", base)
	if err != nil || !first {
		t.Fatalf("a Slack request whose marker landed, retried = %v, %v; want first", first, err)
	}
	if got := p.Injected()[storetest.LostAnswer]; got != 1 {
		t.Fatalf("the proxy lost %d answers, want 1", got)
	}
	if again, err := st.FirstSlackRequest(ctx, "1733220000:v0=lost", base); err != nil || again {
		t.Errorf("the same request again = %v, %v; want refused as a replay", again, err)
	}

	// Every put of a new key (here an OAuth client's registration) is the same mechanism.
	c := oauthstate.Client{ID: "cli_lost_answer", Name: "Lost answer", RedirectURIs: []string{"https://app.example/cb"},
		Registration: oauthstate.RegisteredDynamically, CreatedAt: base}
	p.Inject(storetest.Rule{Fault: storetest.LostAnswer, Op: "PutItem", Times: 1})
	if err := st.PutOAuthClient(ctx, c); err != nil {
		t.Fatalf("a registration whose put landed, retried = %v; want it stored", err)
	}
	if err := st.PutOAuthClient(ctx, c); !errors.Is(err, team.ErrConflict) {
		t.Errorf("the same client id again = %v; want a conflict", err)
	}
}

// The day's cap ask and decision, each made once, stay made once when the
// SDK retries them after a lost answer: the retry is still the first.
func TestRetriedCapAskAndDecisionThatLandedAreStillFirst(t *testing.T) {
	fx := storetest.New(t)
	p := storetest.NewProxy(t)
	st := p.Store(fx, func(o *dynamodb.Options) {
		o.HTTPClient = awshttp.NewBuildableClient().WithTimeout(time.Second)
	})
	ctx := context.Background()
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	p.Inject(storetest.Rule{Fault: storetest.LostAnswer, Op: "UpdateItem", Times: 1})
	if first, err := st.MarkCapAsked(ctx, "alice/writer", "2026-12-01", at); err != nil || !first {
		t.Fatalf("an ask whose mark landed, retried = %v, %v; want first", first, err)
	}
	if again, err := st.MarkCapAsked(ctx, "alice/writer", "2026-12-01", at); err != nil || again {
		t.Errorf("a second ask the same day = %v, %v; want not first", again, err)
	}
	p.Inject(storetest.Rule{Fault: storetest.LostAnswer, Op: "UpdateItem", Times: 1})
	if err := st.DecideCap(ctx, "alice/writer", "2026-12-01", modelspend.Raised, "alice", at, 40_000_000); err != nil {
		t.Fatalf("a decision that landed, retried = %v; want it recorded", err)
	}
	if got := p.Injected()[storetest.LostAnswer]; got != 2 {
		t.Fatalf("the proxy lost %d answers, want 2", got)
	}
	if err := st.DecideCap(ctx, "alice/writer", "2026-12-01", modelspend.Left, "alice", at, 0); !errors.Is(err, team.ErrConflict) {
		t.Errorf("a second decision = %v; want a conflict", err)
	}
}
