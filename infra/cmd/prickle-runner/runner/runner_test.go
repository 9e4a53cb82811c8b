package runner

import (
	"context"
	"errors"
	"fmt"
	"github.com/useprickle/prickle/shared/domain/wakeup"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeTasks stands in for Prickle's get_task and save_checkpoint: a run
// "checkpoints itself" by creating the file own/<task>.
type fakeTasks struct {
	mu          sync.Mutex
	dir         string
	state       string
	deadTokens  map[string]bool
	checkpoints []string // token + " " + progress
	ended       []string // run tokens ended
	usage       map[string]*Usage
	// capped holds every delivered run (MayStart); asked are the tokens it was asked with.
	capped bool
	asked  []string
}

func (f *fakeTasks) EndRun(_ context.Context, token string, usage *Usage) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ended = append(f.ended, token)
	if f.usage == nil {
		f.usage = map[string]*Usage{}
	}
	f.usage[token] = usage
	return nil
}

func (f *fakeTasks) MayStart(_ context.Context, token, _ string) (bool, time.Time, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, token)
	return f.capped, time.Now().Add(time.Hour), nil
}

var errUnauthorized = errors.New("HTTP 401")

func (f *fakeTasks) Task(ctx context.Context, token, taskID string) (TaskView, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if ctx.Err() != nil {
		return TaskView{}, ctx.Err()
	}
	if f.deadTokens[token] {
		return TaskView{}, errUnauthorized
	}
	v := TaskView{Project: "website-v2", State: f.state, Assignee: "alice/writer"}
	if _, err := os.Stat(filepath.Join(f.dir, "own", taskID)); err == nil {
		v.Marks = 1
	}
	return v, nil
}

func (f *fakeTasks) Checkpoint(ctx context.Context, token, taskID, progress string, _ []string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if f.deadTokens[token] {
		return errUnauthorized
	}
	f.checkpoints = append(f.checkpoints, token+" "+progress)
	return nil
}

// testRunner runs the shell script `script` for every wake-up, in dir.
func testRunner(t *testing.T, script string, concurrency int, timeout time.Duration) (*Runner, *fakeTasks, string, context.CancelFunc) {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{"own", "running", "out"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	cfg := Config{PrickleURL: "http://127.0.0.1:1", Concurrency: concurrency, RunTimeout: timeout, Grace: time.Second,
		LogDir: filepath.Join(dir, "logs"), StateDir: filepath.Join(dir, "state"), Projects: map[string]Project{"website-v2": {Dir: dir, Template: TemplateCommand,
			Command: []string{"sh", "-c", script}, Prompt: DefaultPrompt}}}
	tasks := &fakeTasks{dir: dir, state: "working", deadTokens: map[string]bool{}}
	r := New(cfg, tasks, "prk_a_agent", slog.New(slog.NewJSONHandler(io.Discard, nil)))
	ctx, cancel := context.WithCancel(context.Background())
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); r.Wait() })
	return r, tasks, dir, cancel
}

func payload(task, run string) wakeup.Payload {
	return wakeup.Payload{TaskID: task, RunID: run, RunToken: "prk_r_" + run, Reason: wakeup.ReasonTaskRouted}
}

func records(t *testing.T, dir string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "logs", "runs.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// waitFor polls until cond holds (no timing is asserted, only that it happens).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestRunnerOneRunPerDelivery(t *testing.T) {
	r, _, dir, _ := testRunner(t, `echo x >> out/$PRICKLE_RUN_ID; touch own/$PRICKLE_TASK_ID`, 2, time.Minute)
	if got := r.Offer("run_a", payload("t1", "run_a"), "webhook", nil); got != Taken {
		t.Fatalf("a new delivery: %v, want Taken", got)
	}
	if got := r.Offer("run_a", payload("t1", "run_a"), "webhook", nil); got != Repeated {
		t.Errorf("a replay: %v, want Repeated", got)
	}
	r.Wait()
	if got := r.Offer("run_a", payload("t1", "run_a"), "webhook", nil); got != Repeated {
		t.Errorf("a replay after the run: %v, want Repeated", got)
	}
	r.Wait()
	b, _ := os.ReadFile(filepath.Join(dir, "out", "run_a"))
	if string(b) != "x\n" {
		t.Errorf("the run ran %d times, want once", strings.Count(string(b), "x"))
	}
}

func TestRunnerOneRunPerTaskAndConcurrency(t *testing.T) {
	// Each run records how many runs are going (all, and of its task) when it starts.
	script := `mkdir -p running/$PRICKLE_TASK_ID; touch running/$PRICKLE_RUN_ID running/$PRICKLE_TASK_ID/$PRICKLE_RUN_ID
echo "$(ls running | grep -c '^r') $(ls running/$PRICKLE_TASK_ID | wc -l)" > out/$PRICKLE_RUN_ID
sleep 0.2; rm running/$PRICKLE_RUN_ID running/$PRICKLE_TASK_ID/$PRICKLE_RUN_ID`
	r, _, dir, _ := testRunner(t, script, 2, time.Minute)
	for i := range 6 {
		r.Offer("run_"+strconv.Itoa(i), payload("t"+strconv.Itoa(i%3), "run_"+strconv.Itoa(i)), "webhook", nil)
	}
	waitFor(t, "six runs", func() bool { n, _ := os.ReadDir(filepath.Join(dir, "out")); return len(n) == 6 })
	r.Wait()
	for i := range 6 {
		b, err := os.ReadFile(filepath.Join(dir, "out", "run_"+strconv.Itoa(i)))
		if err != nil {
			t.Fatal(err)
		}
		var all, same int
		if _, err := fmt.Sscan(string(b), &all, &same); err != nil {
			t.Fatal(err)
		}
		if all > 2 {
			t.Errorf("run_%d started with %d runs going; the limit is 2", i, all)
		}
		if same != 1 {
			t.Errorf("run_%d started with %d runs of its task going; one at a time", i, same)
		}
	}
	if n := len(records(t, dir)); n != 6 {
		t.Errorf("%d runs recorded, want 6", n)
	}
}

func TestRunnerCheckpointsARunThatLeftNone(t *testing.T) {
	tests := []struct {
		name, script string
		dead         []string
		state        string
		want         string // the record's checkpoint
		progress     string // what the checkpoint says, "" for none
		token        string
	}{
		{"own checkpoint", `touch own/$PRICKLE_TASK_ID`, nil, "working", "own", "", ""},
		{"exits 1", `exit 1`, nil, "working", "saved by the runner", "exited with status 1 after", "prk_r_run_x"},
		{"run token expired", `exit 0`, []string{"prk_r_run_x"}, "waiting", "saved by the runner (agent token)", "exited with status 0 after", "prk_a_agent"},
		{"timed out", `sleep 30`, nil, "working", "saved by the runner", "was ended after the 1s run timeout", "prk_r_run_x"},
		{"task closed", `exit 0`, nil, "cancelled", "none: the task is cancelled", "", ""},
		{"a run longer than a call to Prickle", `sleep 0.5; exit 2`, nil, "working", "saved by the runner", "exited with status 2 after", "prk_r_run_x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, tasks, dir, _ := testRunner(t, tt.script, 1, time.Second)
			r.CallTimeout = 200 * time.Millisecond // each call gets its own
			tasks.state = tt.state
			for _, d := range tt.dead {
				tasks.deadTokens[d] = true
			}
			r.Offer("run_x", payload("t1", "run_x"), "pull", nil)
			r.Wait()
			rec := records(t, dir)
			if len(rec) != 1 || !strings.Contains(rec[0], `"checkpoint":"`+tt.want+`"`) {
				t.Fatalf("record %v, want checkpoint %q", rec, tt.want)
			}
			if tt.progress == "" {
				if len(tasks.checkpoints) != 0 {
					t.Errorf("checkpoints %q, want none", tasks.checkpoints)
				}
				return
			}
			if len(tasks.checkpoints) != 1 {
				t.Fatalf("checkpoints %q, want one", tasks.checkpoints)
			}
			want := tt.token + " prickle-runner: run run_x (task_routed) " + tt.progress
			if !strings.HasPrefix(tasks.checkpoints[0], want) || !strings.HasSuffix(tasks.checkpoints[0], "without return_result or a checkpoint of its own.") {
				t.Errorf("checkpoint %q, want it to start %q", tasks.checkpoints[0], want)
			}
		})
	}
}

// fakeHold records what the runner told a wake-up's source.
type fakeHold struct {
	mu    sync.Mutex
	name  string
	log   *[]string
	next  time.Time
	kept  int
	every time.Duration
}

func (h *fakeHold) Done(context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	*h.log = append(*h.log, "done "+h.name)
	return nil
}

func (h *fakeHold) Keep(context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.kept++
	h.next = time.Now().Add(h.every)
	return nil
}

func (h *fakeHold) Next() time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.next
}

func (h *fakeHold) keeps() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.kept
}

func TestRunnerFinishesAWakeUpWhenItsRunEndsAndRemovesTheMCPConfig(t *testing.T) {
	r, tasks, dir, _ := testRunner(t, `true`, 1, time.Minute)
	// A stand-in for claude that checks its MCP config exists while it runs.
	script := filepath.Join(dir, "fake-claude")
	if err := os.WriteFile(script, []byte("#!/bin/sh\ntest -f \"$PRICKLE_MCP_CONFIG\" && echo present > out/config\nsleep 1.5\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	p := r.Config.Projects["website-v2"]
	p.Template, p.Program = TemplateClaude, script
	r.Config.Projects["website-v2"] = p
	var mu sync.Mutex
	var log []string
	hold := func(name string) *fakeHold {
		return &fakeHold{name: name, log: &log, next: time.Now(), every: 100 * time.Millisecond}
	}
	// A claim redelivered after the visibility timeout has the same wake-up id and a new run:
	// it is not run again, and its receipt replaces the first one's.
	first, again := hold("first claim"), hold("redelivered claim")
	r.Offer("wk_1", payload("t1", "run_c"), "pull", first)
	waitFor(t, "the claim to be kept while its run goes", func() bool { return first.keeps() >= 2 })
	r.Offer("wk_1", payload("t1", "run_d"), "pull", again)
	r.Wait()
	mu.Lock()
	if !slices.Equal(log, []string{"done redelivered claim"}) {
		t.Errorf("told the source %q; want only the latest claim finished, once, when the run ended", log)
	}
	mu.Unlock()
	// A claim of a wake-up whose run has ended is finished at once.
	late := hold("late claim")
	r.Offer("wk_1", payload("t1", "run_e"), "pull", late)
	waitFor(t, "the late claim finished", func() bool { mu.Lock(); defer mu.Unlock(); return slices.Contains(log, "done late claim") })
	if b, _ := os.ReadFile(filepath.Join(dir, "out", "config")); strings.TrimSpace(string(b)) != "present" {
		t.Error("the run did not find its MCP config")
	}
	left, _ := os.ReadDir(filepath.Join(dir, "logs", "mcp"))
	if len(left) != 0 {
		t.Errorf("MCP configs left behind: %v", left)
	}
	if n := len(records(t, dir)); n != 1 {
		t.Errorf("%d runs, want 1", n)
	}
	if !slices.Equal(tasks.ended, []string{"prk_r_run_c"}) {
		t.Errorf("run tokens ended %q, want the run's own", tasks.ended)
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "logs", "*.log"))
	if len(logs) != 1 {
		t.Fatalf("run logs %v, want one", logs)
	}
	b, _ := os.ReadFile(logs[0])
	if !strings.Contains(string(b), "# prickle-runner: the run exited with status 0") || strings.Contains(string(b), "prk_r_") {
		t.Errorf("the run's log records its exit and never its token:\n%s", b)
	}
}

func TestRunnerStopsRuns(t *testing.T) {
	r, tasks, dir, cancel := testRunner(t, `trap 'echo term > out/term; exit 0' TERM; touch out/started; while :; do sleep 0.05; done`, 1, time.Minute)
	var log []string
	r.Offer("run_s", payload("t1", "run_s"), "webhook", &fakeHold{name: "run_s", log: &log})
	waitFor(t, "the run to start", func() bool { _, err := os.Stat(filepath.Join(dir, "out", "started")); return err == nil })
	cancel()
	r.Wait()
	if _, err := os.Stat(filepath.Join(dir, "out", "term")); err != nil {
		t.Error("the run did not get SIGTERM")
	}
	if rec := records(t, dir); len(rec) != 1 || !strings.Contains(rec[0], `"stopped":true`) {
		t.Errorf("record %v", rec)
	}
	if len(tasks.ended) != 0 {
		t.Errorf("a stopped run's token was ended (%q): the run resumes with it", tasks.ended)
	}
	if len(log) != 0 {
		t.Errorf("a stopped run's wake-up was finished (%q): it must come back", log)
	}
	if got := r.Offer("run_t", payload("t2", "run_t"), "webhook", nil); got != Stopping {
		t.Errorf("offered to a stopped runner: %v, want Stopping", got)
	}
	r.Wait()
	if len(records(t, dir)) != 1 {
		t.Error("a stopped runner started a run")
	}
}

// A wake-up of a task whose wakeable run (Codex's, waiting on its owner)
// goes is passed to that run at once (SIGUSR1), then waits its turn.
func TestRunnerTellsAWakeableRunOfItsTasksWakeUp(t *testing.T) {
	r, _, dir, _ := testRunner(t, `true`, 2, time.Minute)
	host := filepath.Join(dir, "fake-codex-run")
	script := "#!/bin/sh\necho \"$PRICKLE_RUN_ID\" >> out/runs\ntrap 'echo \"$PRICKLE_RUN_ID\" > out/usr1; exit 0' USR1\ntouch out/waiting-$PRICKLE_RUN_ID\nwhile :; do sleep 0.05; done\n"
	if err := os.WriteFile(host, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	p := r.Config.Projects["website-v2"]
	p.Template = TemplateCodex
	r.Config.Projects["website-v2"] = p
	r.Self = host
	r.Offer("run_1", payload("t1", "run_1"), "webhook", nil)
	waitFor(t, "the first run to wait", func() bool { _, err := os.Stat(filepath.Join(dir, "out", "waiting-run_1")); return err == nil })
	second := payload("t1", "run_2")
	second.Reason, second.ResumesRun = wakeup.ReasonStepDecided, "run_1"
	r.Offer("run_2", second, "webhook", nil)
	waitFor(t, "the first run to hear of it", func() bool {
		b, _ := os.ReadFile(filepath.Join(dir, "out", "usr1"))
		return strings.TrimSpace(string(b)) == "run_1"
	})
	waitFor(t, "the second run to start after it", func() bool { _, err := os.Stat(filepath.Join(dir, "out", "waiting-run_2")); return err == nil })
	b, _ := os.ReadFile(filepath.Join(dir, "out", "runs"))
	if got := strings.Fields(string(b)); !slices.Equal(got, []string{"run_1", "run_2"}) {
		t.Errorf("runs %q, want run_1 then run_2", got)
	}
}
