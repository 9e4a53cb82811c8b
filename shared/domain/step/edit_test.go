package step_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/useprickle/prickle/shared/domain/step"
)

// asked is a pending step as request_step stores it: canonical input, its fingerprint.
func asked(t *testing.T, tool, input string) step.Step {
	t.Helper()
	c, err := step.CheckInput(json.RawMessage(input))
	if err != nil {
		t.Fatalf("CheckInput(%s): %v", input, err)
	}
	return step.Step{TaskID: "tsk_1", ToolName: tool, Input: c, Fingerprint: step.Fingerprint("tsk_1", tool, c), Status: step.Pending}
}

// edit is what DecideStep makes of an owner's edit: bounded (CheckInput),
// then kept only when it changes the call.
func edit(s step.Step, e json.RawMessage) ([]byte, error) {
	c, err := step.CheckInput(e)
	if err != nil || !s.ChangedBy(c) {
		return nil, err
	}
	return c, nil
}

func TestEdit(t *testing.T) {
	rm := `{"command":"rm -rf build","description":"Clean the build"}`
	for _, tc := range []struct {
		name, tool, input, edit string
		want                    string // the canonical edit; "" for none (approved as asked)
		err                     string
		limit                   string // an *InputLimitError's Limit
	}{
		{name: "another command", tool: "Bash", input: rm, edit: `{"command":"rm -rf build/tmp","description":"Clean the build"}`,
			want: `{"command":"rm -rf build/tmp","description":"Clean the build"}`},
		{name: "keys in another order, spaces: canonical", tool: "Bash", input: rm, edit: "{ \"description\": \"Clean\",\n \"command\": \"rm -rf build/tmp\" }",
			want: `{"command":"rm -rf build/tmp","description":"Clean"}`},
		{name: "only the description reworded: the call as asked", tool: "Bash", input: rm, edit: `{"command":"rm -rf build","description":"Tidy up"}`},
		{name: "the very input", tool: "Write", input: `{"file_path":"/a","content":"x"}`, edit: `{"content":"x","file_path":"/a"}`},
		{name: "a field added", tool: "Bash", input: rm, edit: `{"command":"rm -rf build","timeout":1000}`, want: `{"command":"rm -rf build","timeout":1000}`},
		{name: "an array", tool: "Bash", input: rm, edit: `["rm -rf build/tmp"]`, err: "not a JSON object"},
		{name: "a string", tool: "Bash", input: rm, edit: `"rm -rf build/tmp"`, err: "not a JSON object"},
		{name: "null", tool: "Bash", input: rm, edit: `null`, err: "not a JSON object"},
		{name: "not JSON", tool: "Bash", input: rm, edit: `{"command": rm}`, err: "not JSON"},
		{name: "two values", tool: "Bash", input: rm, edit: `{"command":"a"} {}`, err: "not one JSON value"},
		{name: "over the size", tool: "Bash", input: rm, edit: `{"command":"` + strings.Repeat("x", step.MaxInputBytes) + `"}`, limit: "size"},
		{name: "too deep", tool: "Bash", input: rm, edit: `{"a":` + strings.Repeat("[", step.MaxInputDepth) + strings.Repeat("]", step.MaxInputDepth) + `}`, limit: "depth"},
		{name: "too many elements", tool: "Bash", input: rm, edit: `{"a":[` + strings.TrimSuffix(strings.Repeat("0,", step.MaxInputElements+1), ",") + `]}`, limit: "elements"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := edit(asked(t, tc.tool, tc.input), json.RawMessage(tc.edit))
			var le *step.InputLimitError
			switch {
			case tc.limit != "":
				if !errors.As(err, &le) || le.Limit != tc.limit {
					t.Fatalf("err = %v, want the %s limit", err, tc.limit)
				}
			case tc.err != "":
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
			case err != nil:
				t.Fatalf("edit: %v", err)
			case string(got) != tc.want:
				t.Errorf("edit = %s, want %q", got, tc.want)
			}
		})
	}
}

func TestCommandEdit(t *testing.T) {
	for _, tc := range []struct {
		name, tool, input, cmd string
		line                   string // Command's; "-" when the input has none
		want, err              string
	}{
		{name: "Bash", tool: "Bash", input: `{"command":"git push --force origin main","description":"Publish","timeout":30}`, cmd: "git push origin feature/x",
			line: "git push --force origin main", want: `{"command":"git push origin feature/x","description":"Publish","timeout":30}`},
		{name: "exec_command keeps its cwd", tool: "exec_command", input: `{"command":"/bin/bash -lc 'rm -rf build'","cwd":"/w"}`, cmd: "/bin/bash -lc 'rm -rf build/tmp'",
			line: "/bin/bash -lc 'rm -rf build'", want: `{"command":"/bin/bash -lc 'rm -rf build/tmp'","cwd":"/w"}`},
		{name: "quotes, <, & and a line break stay what they are", tool: "Bash", input: `{"command":"ls"}`, cmd: "echo \"<a>\" && ls\nwc -l",
			line: "ls", want: `{"command":"echo \"<a>\" && ls\nwc -l"}`},
		{name: "an empty command", tool: "Bash", input: `{"command":"ls"}`, cmd: "  ", line: "ls", err: "empty"},
		{name: "not a shell tool", tool: "Write", input: `{"command":"ls"}`, cmd: "pwd", line: "-", err: "no command line"},
		{name: "a command that is not a string", tool: "Bash", input: `{"command":["ls"]}`, cmd: "pwd", line: "-", err: "no command line"},
		{name: "no command", tool: "Bash", input: `{"script":"ls"}`, cmd: "pwd", line: "-", err: "no command line"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line, ok := step.Command(tc.tool, json.RawMessage(tc.input))
			if want := tc.line != "-"; ok != want || (ok && line != tc.line) {
				t.Errorf("Command = %q, %v; want %q", line, ok, tc.line)
			}
			got, err := step.WithCommand(tc.tool, json.RawMessage(tc.input), tc.cmd)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("WithCommand: %v", err)
			}
			c, err := step.Canonical(got)
			if err != nil || string(c) != tc.want {
				t.Errorf("WithCommand = %s (%v), want %s", c, err, tc.want)
			}
		})
	}
}

// An edited step answers the call as asked and the edited call, nothing else;
// it allows the edited input.
func TestAnswersAnEditedStep(t *testing.T) {
	s := asked(t, "Bash", `{"command":"rm -rf build","description":"Clean"}`)
	fp := func(input string) string {
		c, err := step.CheckInput(json.RawMessage(input))
		if err != nil {
			t.Fatal(err)
		}
		return step.Fingerprint("tsk_1", "Bash", c)
	}
	edited := fp(`{"command":"rm -rf build/tmp","description":"Clean"}`)
	if s.EditedFingerprint() != "" || s.Answers(edited) || string(s.Allowed()) != string(s.Input) {
		t.Fatalf("a step not edited: EditedFingerprint %q, answers the edit %v, allows %s", s.EditedFingerprint(), s.Answers(edited), s.Allowed())
	}
	e, err := edit(s, json.RawMessage(`{"command":"rm -rf build/tmp","description":"Clean"}`))
	if err != nil || e == nil {
		t.Fatalf("edit: %s, %v", e, err)
	}
	s.Edited = e
	for _, tc := range []struct {
		name string
		fp   string
		want bool
	}{
		{"the call as asked", s.Fingerprint, true},
		{"the call as asked, reworded", fp(`{"command":"rm -rf build","description":"Remove the build"}`), true},
		{"the edited call", edited, true},
		{"the edited call, reworded", fp(`{"command":"rm -rf build/tmp"}`), true},
		{"another call", fp(`{"command":"rm -rf /"}`), false},
		{"the edited call on another task", step.Fingerprint("tsk_2", "Bash", e), false},
	} {
		if got := s.Answers(tc.fp); got != tc.want {
			t.Errorf("%s: Answers = %v, want %v", tc.name, got, tc.want)
		}
	}
	if string(s.Allowed()) != `{"command":"rm -rf build/tmp","description":"Clean"}` {
		t.Errorf("Allowed = %s, want the edit", s.Allowed())
	}
}
