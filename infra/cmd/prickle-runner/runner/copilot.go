package runner

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"time"
)

// GitHub Copilot CLI 1.0.102 (npm @github/copilot) as a woken run: `copilot
// --output-format json --allow-all-tools --session-id=<uuid> -p <prompt>
// --additional-mcp-config @<file> --usage-output-file <file>` (then
// `--resume=<id>`), COPILOT_HOME a directory of the task's (its sessions
// live there) whose settings.json has Prickle's preToolUse hook at user
// level (repository hooks need folder trust, which --resume does not keep).
// The MCP file, which holds the run token, is the run's own (0600, removed
// when it ends). The hook's input has no call id; an allow's modifiedArgs
// runs as edited, its additionalContext tells the model so; copilot denies when a hook exits non-zero but runs the
// call when it answers with anything but JSON or times out.
type copilotCLI struct{ cliValues }

// copilotTemplate has no login files: copilot keeps its sign-in in the
// system keychain or its config; a run signs in with GH_TOKEN /
// COPILOT_GITHUB_TOKEN (or BYOK).
var copilotTemplate = copilotCLI{cliValues{cli: TemplateCopilot, exe: "copilot", edit: true, hook: 120 * time.Second, gate: 100 * time.Second,
	shells: []string{"bash", "write_bash"}}}

type copilotHook struct {
	ToolName string          `json:"toolName"`
	ToolArgs json.RawMessage `json:"toolArgs"`
}

func (h copilotHook) call() gateCall { return gateCall{Tool: h.ToolName, Input: h.ToolArgs} }

func (copilotCLI) parse(b []byte) (gateCall, error) {
	c, err := parseHook[copilotHook](b, "hook")
	if err != nil {
		return gateCall{}, err
	}
	// Some versions pass the arguments as a JSON string.
	var s string
	if json.Unmarshal(c.Input, &s) == nil {
		c.Input = json.RawMessage(s)
		if !json.Valid(c.Input) {
			return gateCall{}, errors.New("the call's arguments are not JSON")
		}
	}
	return c, nil
}

// answer is what Copilot CLI's preToolUse hook reads: permissionDecision
// "allow" runs the call (with modifiedArgs replacing its arguments), and
// additionalContext, an edit's note, reaches the model with the call's result.
func (copilotCLI) answer(a gateAnswer) []byte {
	return flatAnswer{decision: "permissionDecision", reason: "permissionDecisionReason", args: "modifiedArgs", note: "additionalContext"}.json(a)
}

// Copilot CLI's edit tools (edit and str_replace, create, and
// str_replace_editor but for its view) name their file path; its shells
// are bash and write_bash, after which its postToolUse hook claims.
func (copilotCLI) editedFile(tool string, input json.RawMessage) string {
	switch tool {
	case "edit", "str_replace", "create":
	case "str_replace_editor":
		if fileArg(input, "command") == "view" {
			return ""
		}
	default:
		return ""
	}
	return fileArg(input, "path")
}

func (copilotCLI) afterAnswer(note string) []byte {
	b, _ := json.Marshal(struct {
		AdditionalContext string `json:"additionalContext,omitempty"`
	}{note}) // a string: cannot fail
	return b
}

func (copilotCLI) userDir(getenv func(string) string) string {
	return xdgDir(getenv, "COPILOT_HOME", ".copilot")
}

func (c copilotCLI) prepare(r *agentRun) error {
	settings := map[string]any{"hooks": map[string]any{"preToolUse": []any{map[string]any{
		"type": "command", "bash": gateCommand(r.self, c.name()), "timeoutSec": int(c.hookTimeout() / time.Second),
	}}, "postToolUse": []any{map[string]any{
		"type": "command", "bash": afterCommand(r.self, c.name()), "timeoutSec": int(c.hookTimeout() / time.Second),
	}}}}
	if err := writeSecretJSON(filepath.Join(r.cliHome, "settings.json"), settings); err != nil {
		return err
	}
	mcp := filepath.Join(r.runDir, "mcp.json")
	r.secretFiles = append(r.secretFiles, mcp)
	if err := writeSecretJSON(mcp, map[string]any{"mcpServers": map[string]any{PrickleServer: map[string]any{
		"type": "http", "url": r.mcpURL, "headers": map[string]string{"Authorization": "Bearer " + r.runToken}, "tools": []string{"*"},
	}}}); err != nil {
		return err
	}
	r.env = append(r.env, "COPILOT_HOME="+r.cliHome, "COPILOT_AUTO_UPDATE=false")
	return nil
}

func (copilotCLI) argv(r *agentRun, prompt string) []string {
	a := []string{r.program, "--output-format", "json", "--allow-all-tools"}
	if r.resume {
		a = append(a, "--resume="+r.sessionID)
	} else {
		a = append(a, "--session-id="+r.sessionID)
	}
	a = append(a, "--additional-mcp-config", "@"+filepath.Join(r.runDir, "mcp.json"),
		"--usage-output-file", filepath.Join(r.runDir, "usage.json"))
	a = append(a, r.args...)
	return append(a, "-p", prompt)
}

// usage reads the usage file: tokens per model, summed over every run of the session.
func (copilotCLI) usage(stdout []byte, r *agentRun) (agentUsage, bool) {
	b, err := os.ReadFile(filepath.Join(r.runDir, "usage.json"))
	if err != nil {
		return agentUsage{}, false
	}
	var f struct {
		Models map[string]struct {
			Requests struct {
				Count int `json:"count"`
			} `json:"requests"`
			Usage struct {
				Input      int64 `json:"inputTokens"`
				Output     int64 `json:"outputTokens"`
				CacheRead  int64 `json:"cacheReadTokens"`
				CacheWrite int64 `json:"cacheWriteTokens"`
			} `json:"usage"`
		} `json:"modelMetrics"`
	}
	if json.Unmarshal(b, &f) != nil || f.Models == nil {
		return agentUsage{}, false
	}
	u := agentUsage{Cumulative: true, TurnsCumulative: true}
	best := int64(-1)
	for name, m := range f.Models {
		u.Tokens.Input += m.Usage.Input
		u.Tokens.Output += m.Usage.Output
		u.Turns += m.Requests.Count
		if m.Usage.Input > best || (m.Usage.Input == best && name < u.Model) {
			best, u.Model = m.Usage.Input, name
		}
	}
	// The session id is in the last JSON line of type "result".
	var res struct {
		Type      string `json:"type"`
		SessionID string `json:"sessionId"`
	}
	if json.Unmarshal(lastJSON(stdout, '{'), &res) == nil && res.Type == "result" {
		u.SessionID = res.SessionID
	}
	return u, true
}
