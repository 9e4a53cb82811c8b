package runner

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"time"
)

// opencode 1.18.33 (npm opencode-ai) as a woken run: `opencode run --format
// json --auto <prompt>` (then `-s <ses_…>`, the id opencode gave the
// session in its first run's events), with XDG_DATA_HOME, XDG_CONFIG_HOME,
// XDG_CACHE_HOME and XDG_STATE_HOME directories of the task's (its sessions
// live in the data one) and OPENCODE_CONFIG the run's own file: the user's
// own global opencode config (read, never written) with Prickle's MCP
// server, the gate plugin and every permission "deny". The plugin (see
// opencodeplugin.go) gives the permissions back when opencode loads it, so a
// plugin opencode fails to load leaves every tool denied, and runs
// `prickle-runner hook --cli opencode` before every tool call
// (tool.execute.before), throwing, so that the call is not made, on a deny
// and on any failure of the gate. The input carries the model's call id; an
// allow's edited args replace the call's (the plugin mutates output.args),
// and its note (an edit, a claim's word) is put before the tool's result.
// File claims: see opencodeclaims.go.
type opencodeCLI struct{ cliValues }

// opencodeTemplate's hook timeout is the plugin's own bound on the gate's
// process (opencode awaits a plugin without one); its login file is where
// `opencode auth login` keeps the user's sign-in.
var opencodeTemplate = opencodeCLI{cliValues{cli: TemplateOpencode, exe: "opencode", edit: true, hook: 120 * time.Second, gate: 100 * time.Second,
	logins: []string{"auth.json"}, shells: []string{opencodeShell}}}

// opencodeHook is what the plugin gives the gate: the call and the model's id of it.
type opencodeHook struct {
	Tool   string          `json:"tool"`
	CallID string          `json:"callID"`
	Args   json.RawMessage `json:"args"`
}

func (h opencodeHook) call() gateCall { return gateCall{Tool: h.Tool, Input: h.Args, CallID: h.CallID} }

func (opencodeCLI) parse(b []byte) (gateCall, error) { return parseHook[opencodeHook](b, "plugin") }

// answer is what the plugin reads: only {"decision":"allow"} lets the call
// run (with "args" replacing its arguments); anything else throws.
func (opencodeCLI) answer(a gateAnswer) []byte {
	return flatAnswer{decision: "decision", reason: "reason", args: "args", note: "note"}.json(a)
}

// userDir is the user's opencode data directory, where `opencode auth
// login` keeps their sign-in (auth.json).
func (opencodeCLI) userDir(getenv func(string) string) string {
	return filepath.Join(xdgDir(getenv, "XDG_DATA_HOME", ".local", "share"), "opencode")
}

// homeDir is where the user's sign-in files are linked: the task's own
// opencode data directory.
func (opencodeCLI) homeDir(cliHome string) string { return filepath.Join(cliHome, "data", "opencode") }

func xdgDir(getenv func(string) string, key string, home ...string) string {
	if d := getenv(key); d != "" {
		return d
	}
	return filepath.Join(append([]string{getenv("HOME")}, home...)...)
}

func (o opencodeCLI) prepare(r *agentRun) error {
	cfg, err := opencodeUserConfig(os.Getenv)
	if err != nil {
		return err
	}
	plugin := filepath.Join(r.runDir, "prickle-gate.js")
	if err := writeOpencodePlugin(plugin, r.self, cfg["permission"], o.hookTimeout()); err != nil {
		return err
	}
	plugins, _ := cfg["plugin"].([]any)
	cfg["plugin"] = append(plugins, "file://"+plugin)
	mcp, _ := cfg["mcp"].(map[string]any)
	if mcp == nil {
		mcp = map[string]any{}
	}
	mcp[PrickleServer] = map[string]any{"type": "remote", "url": r.mcpURL, "enabled": true, "oauth": false,
		"headers": map[string]string{"Authorization": "Bearer " + r.runToken}}
	cfg["mcp"] = mcp
	// Every tool is denied unless the gate's plugin is loaded (it puts the
	// user's permissions back).
	cfg["permission"] = map[string]any{"*": "deny"}
	cfg["autoupdate"] = false
	cfg["share"] = "disabled"
	if m, ok := cfg["model"].(string); ok {
		r.model = m
	}
	if m := modelArg(r.args); m != "" {
		r.model = m
	}
	path := filepath.Join(r.runDir, "opencode.json")
	r.secretFiles = append(r.secretFiles, path)
	if err := writeSecretJSON(path, cfg); err != nil {
		return err
	}
	config := filepath.Join(r.cliHome, "config")
	if err := seedOpencodeConfigDir(filepath.Join(config, "opencode")); err != nil {
		return err
	}
	r.env = append(r.env, "OPENCODE_CONFIG="+path, "XDG_CONFIG_HOME="+config, "XDG_DATA_HOME="+filepath.Join(r.cliHome, "data"),
		"XDG_CACHE_HOME="+filepath.Join(r.cliHome, "cache"), "XDG_STATE_HOME="+filepath.Join(r.cliHome, "state"), "OPENCODE_DISABLE_AUTOUPDATE=1",
		// In the run's config already; in the environment they would override its deny.
		"OPENCODE_CONFIG_CONTENT=", "OPENCODE_PERMISSION=", "OPENCODE_CONFIG_DIR=")
	return nil
}

// modelArg is the model of `-m <provider/model>` or `--model` in args.
func modelArg(args []string) string {
	for i, a := range args {
		if (a == "-m" || a == "--model") && i+1 < len(args) {
			return args[i+1]
		}
		if len(a) > 8 && a[:8] == "--model=" {
			return a[8:]
		}
	}
	return ""
}

func (opencodeCLI) argv(r *agentRun, prompt string) []string {
	a := []string{r.program, "run", "--format", "json", "--auto"}
	if r.resume {
		a = append(a, "-s", r.sessionID)
	}
	a = append(a, r.args...)
	return append(a, prompt)
}

// opencodeEvent is one line of `--format json`.
type opencodeEvent struct {
	Type      string `json:"type"`
	SessionID string `json:"sessionID"`
	Part      struct {
		Reason string `json:"reason"`
		Tokens struct {
			Input     int64 `json:"input"`
			Output    int64 `json:"output"`
			Reasoning int64 `json:"reasoning"`
			Cache     struct {
				Read  int64 `json:"read"`
				Write int64 `json:"write"`
			} `json:"cache"`
		} `json:"tokens"`
		Cost float64 `json:"cost"`
	} `json:"part"`
}

func opencodeEvents(stdout []byte) []opencodeEvent {
	var out []opencodeEvent
	for _, l := range bytes.Split(stdout, []byte("\n")) {
		l = bytes.TrimSpace(l)
		if len(l) == 0 || l[0] != '{' {
			continue
		}
		var e opencodeEvent
		if json.Unmarshal(l, &e) == nil && e.Type != "" {
			out = append(out, e)
		}
	}
	return out
}

// usage sums the run's steps (`step_finish`: this run's only), with the
// cost opencode computed from its model's prices.
func (opencodeCLI) usage(stdout []byte, r *agentRun) (agentUsage, bool) {
	u := agentUsage{Model: r.model}
	ok := false
	for _, e := range opencodeEvents(stdout) {
		if u.SessionID == "" {
			u.SessionID = e.SessionID
		}
		if e.Type != "step_finish" {
			continue
		}
		ok = true
		t := e.Part.Tokens
		u.Tokens.Input += t.Input + t.Cache.Read + t.Cache.Write
		u.Tokens.Output += t.Output + t.Reasoning
		u.CostUSD += e.Part.Cost
		u.Turns++
	}
	return u, ok
}

// sessionOf is the id opencode gave the session, in every event.
func (opencodeCLI) sessionOf(stdout []byte) string {
	for _, e := range opencodeEvents(stdout) {
		if e.SessionID != "" {
			return e.SessionID
		}
	}
	return ""
}

// finished: the run's last step ended its turn.
func (opencodeCLI) finished(stdout []byte) bool {
	ev := opencodeEvents(stdout)
	return len(ev) > 0 && ev[len(ev)-1].Type == "step_finish" && ev[len(ev)-1].Part.Reason == "stop"
}
