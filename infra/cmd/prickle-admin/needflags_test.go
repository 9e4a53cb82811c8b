package main

import "testing"

// The missing flags are named in one order, whatever the map's.
func TestNeedFlags(t *testing.T) {
	tests := []struct {
		name  string
		flags map[string]string
		want  string
	}{
		{"all given", map[string]string{"owner": "alice", "slack-user": "U1"}, ""},
		{"one missing", map[string]string{"owner": "alice", "slack-user": ""}, "set-slack-user needs --slack-user"},
		{"several missing, sorted", map[string]string{"slack-user": "", "owner": "", "project": "", "guard": "x"}, "set-slack-user needs --owner, --project, --slack-user"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for range 20 { // map order varies from one range to the next
				err := needFlags("set-slack-user", tt.flags)
				got := ""
				if err != nil {
					got = err.Error()
				}
				if got != tt.want {
					t.Fatalf("needFlags = %q, want %q", got, tt.want)
				}
			}
		})
	}
}
