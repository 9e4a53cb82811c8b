//go:build integration

package main

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/aws/store"
	"github.com/useprickle/prickle/shared/aws/store/storetest"
	"github.com/useprickle/prickle/shared/domain/grant"
)

// The fault run's proxy: every second write lands unanswered, the
// connection breaks, and the stack's own client (the emulator's 30 s
// attempt deadline) retries at once; each use counts once, and the proxy's
// totals say how many answers it lost and how many retries came.
func TestLosingProxyLosesEveryNthWriteAndTheRetryCountsOnce(t *testing.T) {
	fx := storetest.New(t)
	endpoint, p, err := loseAnswers(storetest.Endpoint(t), 2)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	st := store.New(store.NewFunctionClient(endpoint), fx.Tables)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	now := time.Now().UTC()
	g := grant.Grant{ID: "gr_fault", Project: "web", Owner: "alice", Agent: "alice/builder", Scope: grant.ScopePattern,
		ToolName: "Bash", Field: "command", Pattern: "npm test", CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	if err := st.PutGrant(ctx, g); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for i := range 6 {
		if err := st.UseGrant(ctx, "web", g.ID, now); err != nil {
			t.Fatalf("use %d = %v; want it counted", i+1, err)
		}
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("6 uses took %s: a lost answer waited for the attempt deadline instead of a reset", d)
	}
	grants, err := st.ProjectGrants(ctx, "web")
	if err != nil || len(grants) != 1 || grants[0].Uses != 6 {
		t.Fatalf("grants = %+v, %v; want one with 6 uses", grants, err)
	}
	resp, err := http.Get(p.URL + "/totals")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got storetest.Totals
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.Lost < 3 || got.Retries != got.Lost || got.Writes < 7+got.Lost || got.Requests < got.Writes {
		t.Errorf("totals %+v; want ≥ 3 lost, as many retries, ≥ 7 writes besides the retries", got)
	}
}
