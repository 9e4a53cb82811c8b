package main

import (
	"context"
	"flag"
	"slices"
	"strings"
	"testing"
)

// The missing flags are named sorted, whatever the order they are listed in.
func TestNeedFlags(t *testing.T) {
	tests := []struct {
		name string
		set  map[string]string
		need []string
		want string
	}{
		{"all given", map[string]string{"owner": "alice", "slack-user": "U1"}, []string{"owner", "slack-user"}, ""},
		{"one missing", map[string]string{"owner": "alice"}, []string{"owner", "slack-user"}, "set-slack-user needs --slack-user"},
		{"several missing, sorted", map[string]string{"guard": "x"}, []string{"slack-user", "owner", "project", "guard"}, "set-slack-user needs --owner, --project, --slack-user"},
		{"none needed", nil, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := flag.NewFlagSet("set-slack-user", flag.ContinueOnError)
			for _, f := range []string{"owner", "slack-user", "project", "guard"} {
				fs.String(f, "", "")
			}
			for f, v := range tt.set {
				if err := fs.Set(f, v); err != nil {
					t.Fatal(err)
				}
			}
			err := needFlags(fs, tt.need)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Fatalf("needFlags = %q, want %q", got, tt.want)
			}
		})
	}
}

// Every command's needed flags are flags of run's, and run refuses the
// command without them, naming them all.
func TestRunNeedsFlags(t *testing.T) {
	t.Setenv("AWS_REGION", "us-east-1")
	for command, need := range needs {
		t.Run(command, func(t *testing.T) {
			if command == "set-wake" {
				need = append(slices.Clone(need), "url")
			}
			want := make([]string, len(need))
			for i, f := range need {
				want[i] = "--" + f
			}
			slices.Sort(want)
			_, err := run(context.Background(), command, nil)
			if err == nil || err.Error() != command+" needs "+strings.Join(want, ", ") {
				t.Fatalf("run %s with no flags: %v, want it to need %v", command, err, want)
			}
		})
	}
}
