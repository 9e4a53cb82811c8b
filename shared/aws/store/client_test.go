package store

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TestEndpointClientCapsItsConnections sends many concurrent requests to a
// configured endpoint that answers slowly: every one is answered, over at
// most EmulatorConnections connections; the AWS client (no endpoint) is not
// capped.
func TestEndpointClientCapsItsConnections(t *testing.T) {
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "local")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "local")
	var mu sync.Mutex
	var open, peak int
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(20 * time.Millisecond)
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		_, _ = w.Write([]byte(`{}`))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		mu.Lock()
		defer mu.Unlock()
		switch s {
		case http.StateNew:
			open++
			peak = max(peak, open)
		case http.StateClosed, http.StateHijacked:
			open--
		}
	}
	srv.Start()
	defer srv.Close()

	client := NewFunctionClient(srv.URL)
	const requests = 4 * EmulatorConnections
	var wg sync.WaitGroup
	var failed atomic.Int64
	for i := 0; i < requests; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := client.GetItem(context.Background(), &dynamodb.GetItemInput{
				TableName: aws.String("tasks"),
				Key:       map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "x"}},
			})
			if err != nil {
				failed.Add(1)
				t.Log(err)
			}
		}()
	}
	wg.Wait()
	if failed.Load() != 0 {
		t.Fatalf("%d of %d requests failed", failed.Load(), requests)
	}
	mu.Lock()
	got := peak
	mu.Unlock()
	if got > EmulatorConnections || got < 2 {
		t.Fatalf("peak open connections = %d, want 2..%d", got, EmulatorConnections)
	}
	if got := transportOf(t, NewFunctionClient("")).MaxConnsPerHost; got <= EmulatorConnections {
		t.Fatalf("the AWS client caps its connections at %d, want the SDK's default", got)
	}
}

func transportOf(t *testing.T, c *dynamodb.Client) *http.Transport {
	t.Helper()
	b, ok := c.Options().HTTPClient.(interface{ GetTransport() *http.Transport })
	if !ok {
		t.Fatalf("HTTP client %T exposes no transport", c.Options().HTTPClient)
	}
	return b.GetTransport()
}
