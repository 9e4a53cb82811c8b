package runner

import (
	"encoding/json"
	"github.com/useprickle/prickle/shared/domain/wakeup"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// fakeClaude is a stand-in for claude -p --output-format json: it appends
// its arguments to out/argv (one run a line) and prints the result the
// file out/answer holds, with its session id filled in. A --resume of the
// session named in out/refuse fails the way a lost session does.
const fakeClaude = `#!/bin/sh
echo "$*" >> out/argv
sid=""; prev=""
for a in "$@"; do
  case "$prev" in --session-id|--resume) sid="$a";; esac
  prev="$a"
done
if [ -f out/refuse ] && [ "$(cat out/refuse)" = "$sid" ]; then echo "No conversation found with session ID: $sid" >&2; exit 1; fi
echo "some progress on stderr" >&2
sed "s/SID/$sid/" out/answer
`

func claudeRunner(t *testing.T) (*Runner, *fakeTasks, string) {
	t.Helper()
	r, tasks, dir, _ := testRunner(t, `true`, 1, time.Minute)
	script := filepath.Join(dir, "fake-claude")
	if err := os.WriteFile(script, []byte(fakeClaude), 0o700); err != nil {
		t.Fatal(err)
	}
	p := r.Config.Projects["website-v2"]
	p.Template, p.Program, p.AllowedTools, p.ResumePrompt = TemplateClaude, script, DefaultAllowedTools, DefaultResumePrompt
	r.Config.Projects["website-v2"] = p
	r.Self = "/opt/prickle-runner"
	return r, tasks, dir
}

func answer(t *testing.T, dir, result string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "out", "answer"), []byte(result+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

func argvs(t *testing.T, dir string) []string {
	t.Helper()
	b, _ := os.ReadFile(filepath.Join(dir, "out", "argv"))
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

type record struct {
	Session    string `json:"session"`
	Resumed    bool   `json:"resumed"`
	Paused     *Call  `json:"paused"`
	Usage      *Usage `json:"usage"`
	Checkpoint string `json:"checkpoint"`
}

func lastRecord(t *testing.T, dir string) record {
	t.Helper()
	lines := records(t, dir)
	var rec record
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &rec); err != nil {
		t.Fatal(err)
	}
	return rec
}

// The story of a task's runs with Claude Code: the first pauses on a call,
// the owner's decision resumes that very call (no prompt), a later wake-up
// continues the conversation with the resume prompt, and a session Claude
// Code cannot resume is replaced at once by a new conversation told the call.
func TestRunnerContinuesATasksClaudeSession(t *testing.T) {
	r, tasks, dir := claudeRunner(t)
	sessionDir := SessionDir(r.Config.StateDir, "alice/writer", "t1")
	paused := `{"type":"result","stop_reason":"tool_deferred","session_id":"SID","total_cost_usd":0.0125,"num_turns":3,"usage":{"input_tokens":100,"output_tokens":20,"cache_read_input_tokens":50},"deferred_tool_use":{"id":"toolu_1","name":"Bash","input":{"command":"git push origin main","description":"Publish"}}}`
	ended := `{"type":"result","stop_reason":"end_turn","session_id":"SID","total_cost_usd":0.002}`

	// 1. task_routed: a new session, paused on the Bash call.
	answer(t, dir, paused)
	r.Offer("run_1", payload("t1", "run_1"), "webhook", nil)
	r.Wait()
	rec := lastRecord(t, dir)
	if rec.Resumed || rec.Session == "" || rec.Paused == nil || rec.Paused.ToolUseID != "toolu_1" || rec.Paused.Name != "Bash" {
		t.Fatalf("first run's record %+v: a new session paused on toolu_1", rec)
	}
	if rec.Usage == nil || rec.Usage.CostUSD != 0.0125 || rec.Usage.InputTokens != 150 || rec.Usage.OutputTokens != 20 || rec.Usage.Turns != 3 {
		t.Errorf("usage %+v, as Claude Code reported it", rec.Usage)
	}
	if !strings.HasPrefix(rec.Checkpoint, "saved by the runner") || len(tasks.checkpoints) != 1 ||
		!strings.Contains(tasks.checkpoints[0], "paused on its Bash call toolu_1 until its owner decides") {
		t.Errorf("checkpoint %q: %q", rec.Checkpoint, tasks.checkpoints)
	}
	s, ok, err := LoadSession(sessionDir)
	if err != nil || !ok || s.ID != rec.Session || s.Paused == nil || s.Runs != 1 || s.LastRun != "run_1" {
		t.Fatalf("session %+v %v %v", s, ok, err)
	}
	sid := s.ID

	// 2. step_decided: the same session resumed with no prompt, so Claude Code asks the very call again.
	answer(t, dir, ended)
	decided := payload("t1", "run_2")
	decided.Reason, decided.ResumesRun = wakeup.ReasonStepDecided, "run_1"
	r.Offer("run_2", decided, "webhook", nil)
	r.Wait()
	if got := argvs(t, dir)[1]; !strings.HasPrefix(got, "-p --resume "+sid+" --settings ") {
		t.Errorf("second run's argv %q: a bare resume of %s", got, sid)
	}
	if rec := lastRecord(t, dir); !rec.Resumed || rec.Session != sid || rec.Paused != nil {
		t.Errorf("second run's record %+v", rec)
	}

	// 3. result_refused: resumed with the resume prompt, quoting the call last asked.
	if err := SaveAsked(sessionDir, Asked{Call: Call{ToolUseID: "toolu_1", Name: "Bash", Input: json.RawMessage(`{"command":"git push origin main"}`)}, StepID: "stp_1"}); err != nil {
		t.Fatal(err)
	}
	refused := payload("t1", "run_3")
	refused.Reason = wakeup.ReasonResultRefused
	r.Offer("run_3", refused, "webhook", nil)
	r.Wait()
	third := argvs(t, dir)[2]
	if !strings.HasPrefix(third, "-p Prickle woke you again for task t1 (result_refused). The last call you asked your owner about: Bash {\"command\":\"git push origin main\"}.") ||
		!strings.Contains(third, " --resume "+sid+" ") {
		t.Errorf("third run's argv %q", third)
	}

	// 4. The session is gone on Claude Code's side: a new one starts in the same run, told the call.
	if err := os.WriteFile(filepath.Join(dir, "out", "refuse"), []byte(sid), 0o600); err != nil {
		t.Fatal(err)
	}
	again := payload("t1", "run_4")
	again.Reason = wakeup.ReasonResultRefused
	r.Offer("run_4", again, "webhook", nil)
	r.Wait()
	all := argvs(t, dir)
	if len(all) != 5 || !strings.Contains(all[3], "--resume "+sid) || !strings.Contains(all[4], "--session-id ") ||
		!strings.Contains(all[4], "The last call you asked your owner about: Bash") {
		t.Fatalf("argv of the failed resume and the new conversation:\n%s", strings.Join(all[3:], "\n"))
	}
	rec = lastRecord(t, dir)
	if rec.Resumed || rec.Session == sid || rec.Session == "" {
		t.Errorf("record %+v: a new session", rec)
	}
	if n := len(records(t, dir)); n != 4 {
		t.Errorf("%d records, want one per run (4)", n)
	}
	if !slices.Equal(tasks.ended, []string{"prk_r_run_1", "prk_r_run_2", "prk_r_run_3", "prk_r_run_4"}) {
		t.Errorf("ended tokens %q", tasks.ended)
	}
}

// A webhook delivery replayed from the journal whose run token no longer
// works is dropped, not run with a dead token, and leaves the journal.
func TestRunnerDropsAJournaledWakeUpWithADeadToken(t *testing.T) {
	r, tasks, dir, _ := testRunner(t, `echo ran > out/ran`, 1, time.Minute)
	j := NewJournal(r.Config.StateDir, "prk_a_agent")
	w := payload("t1", "run_old")
	h, err := j.Hold(w)
	if err != nil {
		t.Fatal(err)
	}
	tasks.deadTokens["prk_r_run_old"] = true
	r.Offer(w.RunID, w, ViaJournal, h)
	r.Wait()
	if _, err := os.Stat(filepath.Join(dir, "out", "ran")); err == nil {
		t.Error("the run started with a dead run token")
	}
	if got, _ := j.Pending(); len(got) != 0 {
		t.Errorf("journal %+v, want the dropped delivery gone", got)
	}
}
