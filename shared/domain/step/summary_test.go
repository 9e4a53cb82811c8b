package step_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/useprickle/prickle/shared/domain/step"
)

func TestSummary(t *testing.T) {
	long := strings.Repeat("x", 300)
	for _, tc := range []struct {
		name, tool, input, want string
	}{
		{"bash with description", "Bash", `{"command":"git push origin main","description":"Publish the branch"}`, "run the shell command `git push origin main` (Publish the branch)"},
		{"bash without description", "Bash", `{"command":"rm -rf build"}`, "run the shell command `rm -rf build`"},
		{"bash folds line breaks", "Bash", `{"command":"echo a\necho b","description":"two\r\nlines"}`, "run the shell command `echo a echo b` (two lines)"},
		{"bash without command", "Bash", `{"description":"nothing"}`, ""},
		{"write", "Write", `{"file_path":"/repo/site/hero.md","content":"# Hi"}`, "write the file /repo/site/hero.md"},
		{"edit", "Edit", `{"file_path":"/repo/a.go","old_string":"a","new_string":"b"}`, "edit the file /repo/a.go"},
		{"multi edit", "MultiEdit", `{"file_path":"/repo/b.go","edits":[]}`, "edit the file /repo/b.go"},
		{"notebook", "NotebookEdit", `{"notebook_path":"/repo/n.ipynb","new_source":"x"}`, "edit the notebook /repo/n.ipynb"},
		{"web fetch", "WebFetch", `{"url":"https://example.com/pricing","prompt":"prices?"}`, "fetch https://example.com/pricing"},
		{"web search", "WebSearch", `{"query":"prickle mcp"}`, "search the web for prickle mcp"},
		{"codex command", "exec_command", `{"command":"/bin/bash -lc 'git push origin main'","cwd":"/repo"}`, "run the shell command `/bin/bash -lc 'git push origin main'` in /repo"},
		{"codex command without cwd", "exec_command", `{"command":"make deploy"}`, "run the shell command `make deploy`"},
		{"codex command without command", "exec_command", `{"cwd":"/repo"}`, ""},
		{"codex patch, one file", "apply_patch", `{"changes":[{"path":"/repo/a.go","kind":"update","diff":"@@ -1 +1 @@"}]}`, "apply a patch to the file /repo/a.go"},
		{"codex patch, files", "apply_patch", `{"changes":[{"path":"/repo/a.go","kind":"add","diff":"x"},{"path":"/repo/b\nc.go","kind":"delete","diff":""}]}`, "apply a patch to the files /repo/a.go, /repo/b c.go"},
		{"codex patch without changes", "apply_patch", `{"changes":"nope"}`, ""},
		{"mcp tool", "mcp__github__create_pull_request", `{"title":"x"}`, "call the tool create_pull_request of the MCP server github"},
		{"mcp tool with underscores in its name", "mcp__my_server__do__it", `{}`, "call the tool do__it of the MCP server my_server"},
		{"mcp prefix without a tool", "mcp__github", `{}`, ""},
		{"unknown tool", "deploy", `{"env":"prod"}`, ""},
		{"field of the wrong type", "Write", `{"file_path":42}`, ""},
		{"malformed input", "Bash", `not json`, ""},
		{"long command is cut", "Bash", `{"command":"` + long + `"}`, "run the shell command `" + strings.Repeat("x", 200-len("run the shell command `")-1) + "…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := step.Summary(tc.tool, json.RawMessage(tc.input))
			if got != tc.want {
				t.Errorf("Summary(%s, %s) = %q, want %q", tc.tool, tc.input, got, tc.want)
			}
			if strings.ContainsAny(got, "\n\r—") {
				t.Errorf("summary %q has a line break or a dash", got)
			}
		})
	}
}
