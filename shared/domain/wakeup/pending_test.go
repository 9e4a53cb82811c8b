package wakeup

import (
	"strings"
	"testing"
	"time"
)

func TestPendingID(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 0, 0, 123e6, time.UTC)
	id := PendingID("Task Routed:tsk_1:1", "alice/writer", at)
	if !strings.HasPrefix(id, "wk_1796115600123_") || !ValidPendingID(id) {
		t.Fatalf("PendingID = %s", id)
	}
	tests := []struct {
		name  string
		other string
		same  bool
	}{
		{"same event and agent (a redelivery)", PendingID("Task Routed:tsk_1:1", "alice/writer", at), true},
		{"another agent", PendingID("Task Routed:tsk_1:1", "bob/reviewer", at), false},
		{"another event", PendingID("Task Routed:tsk_1:2", "alice/writer", at), false},
	}
	for _, tt := range tests {
		if (tt.other == id) != tt.same {
			t.Errorf("%s: %s vs %s", tt.name, tt.other, id)
		}
	}
	if later := PendingID("x", "alice/writer", at.Add(time.Millisecond)); later <= PendingID("y", "alice/writer", at) {
		t.Errorf("ids do not sort by time: %s <= earlier", later)
	}
	for _, bad := range []string{"", "wk_1_ab", "wk_1796115600123_0123456789abcdeg", "WK_1796115600123_0123456789abcdef", id + "x", "../" + id} {
		if ValidPendingID(bad) {
			t.Errorf("ValidPendingID(%q) = true", bad)
		}
	}
}

func TestNewClaim(t *testing.T) {
	a, err := NewClaim()
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewClaim()
	if err != nil {
		t.Fatal(err)
	}
	if a == b || !strings.HasPrefix(a, "wkc_") || len(a) > MaxClaimLength {
		t.Errorf("claims %q, %q", a, b)
	}
	if ClaimHash(a) == ClaimHash(b) || len(ClaimHash(a)) != 64 || strings.Contains(ClaimHash(a), a) {
		t.Errorf("ClaimHash(%q) = %s", a, ClaimHash(a))
	}
}
