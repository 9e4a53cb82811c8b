package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Each run of a task gets the same session directory, 0700, under the state
// dir and its agent; another task gets another; a task id cannot climb out.
func TestRunsOfATaskShareItsSessionDir(t *testing.T) {
	r, _, dir, _ := testRunner(t, `echo "$PRICKLE_SESSION_DIR" >> out/$PRICKLE_TASK_ID; touch own/$PRICKLE_TASK_ID`, 2, time.Minute)
	for _, d := range [][2]string{{"t1", "run_a"}, {"t1", "run_b"}, {"t2", "run_c"}} {
		r.Offer(d[1], payload(d[0], d[1]), "webhook", nil)
		r.Wait()
	}
	read := func(task string) []string {
		b, err := os.ReadFile(filepath.Join(dir, "out", task))
		if err != nil {
			t.Fatal(err)
		}
		return strings.Fields(string(b))
	}
	t1, t2 := read("t1"), read("t2")
	want := filepath.Join(dir, "state", "sessions", "alice_writer", "t1")
	if len(t1) != 2 || t1[0] != want || t1[1] != want {
		t.Errorf("t1's runs got %q, want %s twice", t1, want)
	}
	if len(t2) != 1 || t2[0] != filepath.Join(dir, "state", "sessions", "alice_writer", "t2") {
		t.Errorf("t2's run got %q", t2)
	}
	fi, err := os.Stat(want)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("session dir %v mode %v, want 0700", err, fi.Mode())
	}
	if got := SessionDir("/s", "../x", "../../etc"); got != filepath.Join("/s", "sessions", "___x", "______etc") {
		t.Errorf("SessionDir of climbing names = %s", got)
	}
}
