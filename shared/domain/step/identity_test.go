package step_test

import (
	"testing"

	"github.com/useprickle/prickle/shared/domain/step"
)

// A model words a call afresh each time it generates it: the same command
// with another description (and its keys in another order) is the same call;
// anything that changes what runs is another.
func TestFingerprintOfAReworded(t *testing.T) {
	fp := func(tool, input string) string {
		t.Helper()
		c, err := step.CheckInput([]byte(input))
		if err != nil {
			t.Fatalf("CheckInput(%s): %v", input, err)
		}
		return step.Fingerprint("tsk_1", tool, c)
	}
	asked := fp("Bash", `{"command":"git push origin main","description":"Publish the reviewed branch"}`)
	cases := []struct {
		name, tool, input string
		same              bool
	}{
		{"another description, keys in another order", "Bash", `{"description":"Push the branch to origin","command":"git push origin main"}`, true},
		{"no description", "Bash", `{"command":"git push origin main"}`, true},
		{"another command", "Bash", `{"command":"git push --force origin main","description":"Publish the reviewed branch"}`, false},
		{"a timeout changes how it runs", "Bash", `{"command":"git push origin main","description":"Publish the reviewed branch","timeout":600000}`, false},
		{"in the background", "Bash", `{"command":"git push origin main","run_in_background":true}`, false},
		{"description is not descriptive for another tool", "Task", `{"command":"git push origin main","description":"Push the branch to origin"}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := fp(c.tool, c.input) == asked; got != c.same {
				t.Errorf("same call as the asked one = %v, want %v", got, c.same)
			}
		})
	}
	// Another tool keeps every field: a description there may be what runs.
	if fp("Task", `{"description":"a"}`) == fp("Task", `{"description":"b"}`) {
		t.Error("Task's description was dropped from its identity")
	}
}

func TestIdentity(t *testing.T) {
	cases := []struct{ tool, in, want string }{
		{"Bash", `{"command":"a <b> && c","description":"x"}`, `{"command":"a <b> && c"}`},
		{"Bash", `{"command":"ls"}`, `{"command":"ls"}`},
		{"Write", `{"description":"x","file_path":"/a"}`, `{"description":"x","file_path":"/a"}`},
	}
	for _, c := range cases {
		if got := string(step.Identity(c.tool, []byte(c.in))); got != c.want {
			t.Errorf("Identity(%s, %s) = %s, want %s", c.tool, c.in, got, c.want)
		}
	}
}
