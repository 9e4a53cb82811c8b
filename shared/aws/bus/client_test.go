package bus

import (
	"testing"
)

// The functions' publisher holds the client's method value, never the
// client: a client in the interface would link every EventBridge operation
// into the binaries that execute templates (docs/architecture.md, "Binary size").
func TestFromEnvHoldsTheMethodValue(t *testing.T) {
	t.Setenv("PRICKLE_EVENTS_ENDPOINT", "http://127.0.0.1:1")
	t.Setenv("EVENT_BUS_NAME", "prickle-test")
	b := FromEnv()
	if _, ok := b.API.(PutEventsFunc); !ok {
		t.Fatalf("FromEnv's API is %T, want a PutEventsFunc", b.API)
	}
	if b.BusName != "prickle-test" {
		t.Fatalf("bus name %q", b.BusName)
	}
}
