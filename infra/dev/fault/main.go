// Command fault checks a local stack's store after a fault run: e2e suites
// played against a stack started with PRICKLE_LOSE_ANSWERS=N, which loses
// the answer of one write in N between the stack and the emulator (the
// write lands, the SDK retries). It prints the proxy's counts (writes,
// answers lost, retries) and the invariants of infra/dev/invariants (each
// allowed call allowed once, each grant use and budget debit counted once,
// each wake-up run once, each task's history in order) and, with -log, the
// answers that were failures (5xx, ERROR lines) in the stack's log, and
// exits 1 on any violation. infra/dev/e2e/run.sh runs it after the suites of a fault run:
//
//	PRICKLE_LOSE_ANSWERS=5 infra/dev/e2e/run.sh story owners runner
//	go run ./infra/dev/fault -state .prickle/local.json   # against a running stack
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/useprickle/prickle/infra/cmd/prickle-admin/dynamo"
	"github.com/useprickle/prickle/infra/cmd/prickle-admin/localjson"
	"github.com/useprickle/prickle/infra/dev/invariants"
	"github.com/useprickle/prickle/shared/aws/store"
	"github.com/useprickle/prickle/shared/aws/store/storetest"
)

func main() {
	state := flag.String("state", ".prickle/local.json", "local.json of the running stack")
	stackLog := flag.String("log", "", "the stack's log, whose 5xx answers and ERROR lines count as failures (none: not counted)")
	flag.Parse()
	ok, err := check(context.Background(), *state, *stackLog)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fault:", err)
		os.Exit(2)
	}
	if !ok {
		os.Exit(1)
	}
}

func check(ctx context.Context, path, stackLog string) (bool, error) {
	s, err := localjson.Read(path)
	if err != nil {
		return false, err
	}
	if s.DynamoDBEndpoint == "" {
		return false, fmt.Errorf("%s names no dynamodb_endpoint (is the stack running?)", path)
	}
	totals, err := proxyTotals(ctx, s.FaultTotalsURL)
	if err != nil {
		return false, err
	}
	client, err := dynamo.Client(ctx, s.DynamoDBEndpoint)
	if err != nil {
		return false, err
	}
	st := store.New(client, store.Tables{Tasks: s.Tables["TasksTable"], Steps: s.Tables["StepsTable"], Pulse: s.Tables["PulseTable"],
		Directory: s.Tables["DirectoryTable"], Wakeups: s.Tables["WakeupsTable"], OAuth: s.Tables["OAuthTable"]})
	r, err := invariants.Check(ctx, invariants.Source{Store: st, Client: client, Tables: s.Tables})
	if err != nil {
		return false, err
	}
	failed, examples := 0, []string(nil)
	if stackLog != "" {
		if failed, examples, err = failures(stackLog); err != nil {
			return false, err
		}
	}
	lost := "none lost"
	if s.LoseAnswers > 0 {
		lost = fmt.Sprintf("one write's answer in %d lost", s.LoseAnswers)
	}
	fmt.Printf("fault run (%s): %d requests, %d writes, %d answers lost, %d retries\n", lost, totals.Requests, totals.Writes, totals.Lost, totals.Retries)
	fmt.Printf("checked: %d tasks, %d steps, %d allowed without asking, %d grant uses, %d budget spends, %d wake-ups\n",
		r.Tasks, r.Steps, r.Allowed, r.GrantUses, r.Debits, r.WakeUps)
	fmt.Printf("violations: %d double counts, %d answered as failures, %d missing effects, %d histories out of order\n",
		r.Count(invariants.DoubleCount), failed, r.Count(invariants.MissingEffect), r.Count(invariants.OutOfOrder))
	for _, v := range r.Violations {
		fmt.Printf("  %s: %s\n", v.Kind, v.What)
	}
	for _, e := range examples {
		fmt.Printf("  answered as a failure: %s\n", e)
	}
	return len(r.Violations) == 0 && failed == 0, nil
}

// proxyTotals reads the losing proxy's counts; a stack without one has none.
func proxyTotals(ctx context.Context, url string) (storetest.Totals, error) {
	var t storetest.Totals
	if url == "" {
		return t, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return t, fmt.Errorf("proxy totals: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return t, fmt.Errorf("proxy totals: %w", err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&t); err != nil {
		return t, fmt.Errorf("proxy totals: %w", err)
	}
	return t, nil
}
