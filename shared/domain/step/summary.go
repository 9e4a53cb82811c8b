package step

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
)

// summaryMax bounds a summary's length in runes; longer values are cut with an ellipsis.
const summaryMax = 200

// Summary says in one line what a call does, from the input of well-known
// tools (Claude Code's Bash, Write, Edit, MultiEdit, NotebookEdit, Read,
// WebFetch, WebSearch; the shell tools of Qwen Code, Gemini CLI
// (run_shell_command), Copilot CLI and opencode (bash); Codex's exec_command and apply_patch as
// prickle-runner asks them; and any MCP tool named mcp__<server>__<tool>),
// so an owner asked by a permission layer, which sends no kind, target or
// reason, still sees what the call would do; it is empty for other tools.
func Summary(toolName string, input json.RawMessage) string {
	var in map[string]any
	_ = json.Unmarshal(input, &in) // a malformed input simply has no fields to show
	field := func(name string) string {
		s, _ := in[name].(string)
		return oneLine(s)
	}
	switch toolName {
	case "Bash", "run_shell_command", "bash": // Claude Code's, Qwen Code's and Gemini CLI's, Copilot CLI's and opencode's
		tail := ""
		if d := field("description"); d != "" {
			tail = " (" + d + ")"
		}
		return commandSummary(field("command"), tail)
	case "Write":
		return pathSummary("write the file ", field("file_path"))
	case "Edit", "MultiEdit":
		return pathSummary("edit the file ", field("file_path"))
	case "NotebookEdit":
		return pathSummary("edit the notebook ", field("notebook_path"))
	case "Read":
		return pathSummary("read the file ", field("file_path"))
	case "WebFetch":
		return pathSummary("fetch ", field("url"))
	case "WebSearch":
		return pathSummary("search the web for ", field("query"))
	case "exec_command":
		tail := ""
		if dir := field("cwd"); dir != "" {
			tail = " in " + dir
		}
		return commandSummary(field("command"), tail)
	case "apply_patch":
		return patchSummary(in["changes"])
	}
	if rest, ok := strings.CutPrefix(toolName, "mcp__"); ok {
		if server, tool, ok := strings.Cut(rest, "__"); ok && server != "" && tool != "" {
			return clip(fmt.Sprintf("call the tool %s of the MCP server %s", oneLine(tool), oneLine(server)))
		}
	}
	return ""
}

// commandSummary quotes a shell command, then tail (its description or directory).
func commandSummary(cmd, tail string) string {
	if cmd == "" {
		return ""
	}
	return clip("run the shell command `" + cmd + "`" + tail)
}

// patchSummary names the files a Codex patch adds, deletes or changes.
func patchSummary(changes any) string {
	list, _ := changes.([]any)
	var paths []string
	for _, c := range list {
		m, _ := c.(map[string]any)
		if p, _ := m["path"].(string); p != "" {
			paths = append(paths, oneLine(p))
		}
	}
	switch len(paths) {
	case 0:
		return ""
	case 1:
		return clip("apply a patch to the file " + paths[0])
	}
	return clip("apply a patch to the files " + strings.Join(paths, ", "))
}

func pathSummary(prefix, value string) string {
	if value == "" {
		return ""
	}
	return clip(prefix + value)
}

// oneLine folds line breaks and other control characters into spaces, and
// bytes that are not UTF-8 into U+FFFD, so a summary fits a subject line.
func oneLine(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
}

func clip(s string) string {
	r := []rune(s)
	if len(r) <= summaryMax {
		return s
	}
	return string(r[:summaryMax-1]) + "…"
}
