package runner

import "testing"

// TestRunsNameTheVariablesTheyLack: both runs under prickle-runner refuse
// an environment that lacks any of their inputs, naming each in order.
func TestRunsNameTheVariablesTheyLack(t *testing.T) {
	env := func(unset ...string) func(string) string {
		return func(k string) string {
			for _, u := range unset {
				if k == u {
					return ""
				}
			}
			return "x"
		}
	}
	cases := []struct {
		name  string
		read  func(func(string) string) error
		unset []string
		want  string
	}{
		{"agent-run whole", func(g func(string) string) error { _, err := agentEnvFrom(g); return err }, nil, ""},
		{"agent-run lacking two", func(g func(string) string) error { _, err := agentEnvFrom(g); return err },
			[]string{"PRICKLE_NEW_PROMPT", "PRICKLE_RUN_ID", "PRICKLE_TASK_ID"},
			AgentRunCommand + " runs under prickle-runner: PRICKLE_RUN_ID, PRICKLE_NEW_PROMPT not set"},
		{"codex-run whole", func(g func(string) string) error { _, err := codexEnvFrom(g); return err }, []string{"PRICKLE_PROJECT"}, ""},
		{"codex-run lacking three", func(g func(string) string) error { _, err := codexEnvFrom(g); return err },
			[]string{"PRICKLE_SESSION_DIR", "PRICKLE_MCP_URL", "PRICKLE_TASK_ID", "PRICKLE_NEW_PROMPT"},
			CodexRunCommand + " runs under prickle-runner: PRICKLE_MCP_URL, PRICKLE_TASK_ID, PRICKLE_SESSION_DIR not set"},
	}
	for _, c := range cases {
		got := ""
		if err := c.read(env(c.unset...)); err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("%s: error %q, want %q", c.name, got, c.want)
		}
	}
}
