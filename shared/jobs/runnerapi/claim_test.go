package runnerapi

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/domain/wakeup"
)

type agentTokens struct{}

func (agentTokens) TokenByHash(context.Context, string) (identity.Token, error) {
	return identity.Token{Kind: identity.KindAgent, Agent: "alice/writer"}, nil
}

// failingQueue fails each read of the claimable wake-ups with err, after
// calling during (a runner going away while its claim reads the store).
type failingQueue struct {
	Queue
	during func()
	err    error
}

func (q failingQueue) ClaimableWakeups(ctx context.Context, _ string, _ time.Time, _ int) ([]wakeup.Pending, error) {
	q.during()
	return nil, fmt.Errorf("claimable wake-ups: %w", q.err)
}

// A claim whose runner went away mid-read is no failure of Prickle's: no
// ERROR line, no 500 (the fault run counts those); a store failure with the
// runner still there is both.
func TestAClaimWhoseRunnerWentAwayIsNotAFailure(t *testing.T) {
	for _, tt := range []struct {
		name      string
		goAway    bool
		wantError bool
	}{
		{"the runner went away", true, false},
		{"the store failed", false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var logged bytes.Buffer
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			during, err := func() {}, error(errStore)
			if tt.goAway {
				during, err = cancel, context.Canceled
			}
			h := New(Config{Tokens: agentTokens{}, Queue: failingQueue{during: during, err: err}, Log: slog.New(slog.NewJSONHandler(&logged, nil))})
			req := httptest.NewRequest(http.MethodPost, ClaimPath, strings.NewReader(`{"wait_seconds":0}`)).WithContext(ctx)
			req.Header.Set("Authorization", "Bearer prk_a_test")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			gotError := strings.Contains(logged.String(), `"level":"ERROR"`) || strings.Contains(logged.String(), `"status":500`)
			if gotError != tt.wantError {
				t.Errorf("logged an error or a 500: %v, want %v:\n%s", gotError, tt.wantError, logged.String())
			}
		})
	}
}

var errStore = fmt.Errorf("operation error DynamoDB: Query: InternalServerError")
