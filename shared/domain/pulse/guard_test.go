package pulse

import "testing"

func TestGuard(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"", GuardDeny, true},
		{"deny", GuardDeny, true},
		{"ask", GuardAsk, true},
		{"warn", GuardWarn, true},
		{"Warn", "", false},
		{"off", "", false},
	}
	for _, tt := range tests {
		got, err := Guard(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("Guard(%q) = %q, %v; want %q (ok %v)", tt.in, got, err, tt.want, tt.ok)
		}
	}
}
