package runner

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// pluginDriver loads the gate plugin as opencode does (its default export
// called, then its hooks) and prints what came of one bash call.
const pluginDriver = `import { pathToFileURL } from "node:url";
const m = await import(pathToFileURL(process.argv[2]).href);
const hooks = await m.PrickleGate({});
const cfg = { permission: { "*": "deny" }, model: "mock/mock-model" };
await hooks.config(cfg);
const output = { args: { command: "echo hi > out.txt", description: "write out.txt" } };
let threw = null;
const tool = process.env.DRIVER_TOOL || "bash";
try { await hooks["tool.execute.before"]({ tool, sessionID: "ses_1", callID: "call_1" }, output); } catch (e) { threw = String(e.message); }
const after = { title: "", output: "(no output)", metadata: {} };
if (threw === null) await hooks["tool.execute.after"]({ tool, sessionID: "ses_1", callID: "call_1", args: output.args }, after);
console.log(JSON.stringify({ threw, args: output.args, permission: cfg.permission ?? null, after: after.output }));
`

type pluginResult struct {
	Threw      *string         `json:"threw"`
	Args       json.RawMessage `json:"args"`
	Permission json.RawMessage `json:"permission"`
	After      string          `json:"after"`
}

// runPlugin writes the plugin for gate (the gate's executable) and runs
// one call through it with env.
func runPlugin(t *testing.T, gate string, permission any, timeout time.Duration, env ...string) pluginResult {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node on PATH")
	}
	dir := t.TempDir()
	// opencode (bun) loads the .js as a module; node needs .mjs.
	plugin := filepath.Join(dir, "prickle-gate.mjs")
	if err := writeOpencodePlugin(plugin, gate, permission, timeout); err != nil {
		t.Fatal(err)
	}
	driver := filepath.Join(dir, "driver.mjs")
	if err := os.WriteFile(driver, []byte(pluginDriver), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, driver, plugin)
	cmd.Env = append(append(os.Environ(), "PRICKLE_SESSION_DIR="+dir), env...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("driver: %v: %s", err, out)
	}
	var r pluginResult
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("driver said %q", out)
	}
	return r
}

// fakeGate is a gate executable that does what script says.
func fakeGate(t *testing.T, script string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "gate")
	if err := os.WriteFile(path, []byte("#!/bin/sh\ncat > /dev/null\n"+script+"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	return path
}

const pluginArgs = `{"command":"echo hi > out.txt","description":"write out.txt"}`

// The plugin fails closed: the gate's process (the runner's real gate, the
// test binary standing for it) crashing, killed, panicking, told nothing
// usable by Prickle, or any gate exiting non-zero, answering anything but
// one allow, too late or not at all: the plugin throws, so opencode does
// not make the call, and the arguments are as the model gave them.
func TestOpencodePluginFailsClosed(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	real := []string{gateHelperEnv + "=1", "PRICKLE_RUN_TOKEN=prk_r_tok"}
	tests := []struct {
		name    string
		gate    string
		env     []string
		timeout time.Duration
		reason  string // in the thrown message
	}{
		{name: "gate exits 1", gate: self, env: append(real, gateFaultEnv+"=exit1", "PRICKLE_MCP_URL=http://127.0.0.1:1/mcp"), reason: gateFailed},
		{name: "gate panics", gate: self, env: append(real, gateFaultEnv+"=panic", "PRICKLE_MCP_URL=http://127.0.0.1:1/mcp"), reason: gateFailed},
		{name: "gate killed", gate: self, env: append(real, gateFaultEnv+"=kill", "PRICKLE_MCP_URL=http://127.0.0.1:1/mcp"), reason: gateFailed},
		{name: "gate hangs past the plugin's bound", gate: self, env: append(real, gateFaultEnv+"=hang", "PRICKLE_MCP_URL=http://127.0.0.1:1/mcp"), timeout: time.Second, reason: gateFailed},
		{name: "Prickle unreachable", gate: self, env: append(real, "PRICKLE_MCP_URL=http://127.0.0.1:1/mcp"), reason: "could not ask your owner"},
		{name: "Prickle answers no step", gate: self, env: append(real, "PRICKLE_MCP_URL="+garbledMCP(t)), reason: "could not ask your owner"},
		{name: "gate missing", gate: filepath.Join(t.TempDir(), "no-such-runner"), reason: gateFailed},
		{name: "not JSON", gate: fakeGate(t, `echo 'allow {'`), reason: gateFailed},
		{name: "cut short", gate: fakeGate(t, `printf '{"decision":"allow"'`), reason: gateFailed},
		{name: "no decision", gate: fakeGate(t, `echo '{"reason":"fine"}'`), reason: "fine"},
		{name: "another decision", gate: fakeGate(t, `echo '{"decision":"Allow"}'`), reason: gateFailed},
		{name: "allow then exit 1", gate: fakeGate(t, `echo '{"decision":"allow"}'; exit 1`), reason: gateFailed},
		{name: "allow with args that are no object", gate: fakeGate(t, `echo '{"decision":"allow","args":"rm -rf /"}'`), reason: gateFailed},
		{name: "allow with null args", gate: fakeGate(t, `echo '{"decision":"allow","args":null}'`), reason: gateFailed},
		{name: "allow too late", gate: fakeGate(t, `sleep 30; echo '{"decision":"allow"}'`), timeout: time.Second, reason: gateFailed},
		{name: "deny", gate: fakeGate(t, `echo '{"decision":"deny","reason":"Not on a Friday."}'`), reason: "Not on a Friday."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			timeout := tt.timeout
			if timeout == 0 {
				timeout = 20 * time.Second
			}
			start := time.Now()
			r := runPlugin(t, tt.gate, nil, timeout, tt.env...)
			if r.Threw == nil {
				t.Fatalf("the call was let through: %+v", r)
			}
			if !strings.Contains(*r.Threw, tt.reason) {
				t.Errorf("thrown %q, want %q in it", *r.Threw, tt.reason)
			}
			if jsonText(r.Args) != jsonText(json.RawMessage(pluginArgs)) {
				t.Errorf("the call's args changed: %s", r.Args)
			}
			// Far from the bound on a busy host, far below the 30 s a plugin
			// that waited for the late gate would take.
			if tt.timeout > 0 && time.Since(start) > tt.timeout+15*time.Second {
				t.Errorf("took %s past a bound of %s: the plugin waited for the gate", time.Since(start), tt.timeout)
			}
		})
	}
}

// Through the runner's real gate, an allow-listed call runs as asked; an
// allow with args runs as edited and the result tells the model; the
// config hook puts back the user's permissions, or removes Prickle's deny.
func TestOpencodePluginAllows(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	r := runPlugin(t, self, nil, 20*time.Second, gateHelperEnv+"=1", "PRICKLE_RUN_TOKEN=prk_r_tok", "PRICKLE_ALLOWED_TOOLS=prickle_get_task,bash",
		"PRICKLE_MCP_URL=http://127.0.0.1:1/mcp")
	if r.Threw != nil || jsonText(r.Args) != jsonText(json.RawMessage(pluginArgs)) || r.After != "(no output)" {
		t.Fatalf("allow-listed: %+v (%v)", r, r.Threw)
	}
	if string(r.Permission) != "null" {
		t.Errorf("no permissions of the user's: Prickle's deny is left: %s", r.Permission)
	}
	edit := fakeGate(t, `echo '{"decision":"allow","args":{"command":"echo edited > out.txt"},"note":"Prickle: your owner edited this call"}'`)
	r = runPlugin(t, edit, map[string]any{"bash": "ask", "edit": "deny"}, 20*time.Second)
	if r.Threw != nil || string(r.Args) != `{"command":"echo edited > out.txt"}` {
		t.Fatalf("edited: %+v", r)
	}
	if !strings.HasPrefix(r.After, "Prickle: your owner edited this call") {
		t.Errorf("the model is not told of the edit: %q", r.After)
	}
	if jsonText(r.Permission) != `{"bash":"ask","edit":"deny"}` {
		t.Errorf("the user's permissions: %s", r.Permission)
	}
}

// After bash the plugin runs the post-tool hook (`--after`) and puts its
// note before the command's output; after another tool it does not; a hook
// that fails, hangs or answers garbage leaves the output as it was and
// never throws. An allow's note (a claim's word) reaches the model too.
func TestOpencodePluginAfterShell(t *testing.T) {
	gate := func(before, after string) string {
		return fakeGate(t, `case "$*" in *--after*) `+after+` ;; *) `+before+` ;; esac`)
	}
	allow := `echo '{"decision":"allow"}'`
	claimed := `echo '{"note":"prickle-runner: src/a.ts is claimed"}'`
	tests := []struct {
		name, gate, tool, want string
		timeout                time.Duration
	}{
		{name: "a note after bash", gate: gate(allow, claimed), want: "prickle-runner: src/a.ts is claimed\n\n(no output)"},
		{name: "nothing to say", gate: gate(allow, `echo '{}'`), want: "(no output)"},
		{name: "not after another tool", gate: gate(allow, claimed), tool: "read", want: "(no output)"},
		{name: "the hook exits 1", gate: gate(allow, claimed+`; exit 1`), want: "(no output)"},
		{name: "the hook answers garbage", gate: gate(allow, `echo 'note: {'`), want: "(no output)"},
		{name: "the hook is missing its answer's note", gate: gate(allow, `echo '{"note":7}'`), want: "(no output)"},
		{name: "the hook hangs past the bound", gate: gate(allow, `sleep 5; `+claimed), timeout: time.Second, want: "(no output)"},
		{name: "the allow's note and the hook's", gate: gate(`echo '{"decision":"allow","note":"bob/coder holds src/b.ts"}'`, claimed),
			want: "bob/coder holds src/b.ts\nprickle-runner: src/a.ts is claimed\n\n(no output)"},
		{name: "the allow's note after another tool", gate: gate(`echo '{"decision":"allow","note":"bob/coder holds src/b.ts"}'`, claimed), tool: "edit",
			want: "bob/coder holds src/b.ts\n\n(no output)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			timeout := tt.timeout
			if timeout == 0 {
				timeout = 20 * time.Second
			}
			start := time.Now()
			r := runPlugin(t, tt.gate, nil, timeout, "DRIVER_TOOL="+tt.tool)
			if r.Threw != nil {
				t.Fatalf("threw %q", *r.Threw)
			}
			if r.After != tt.want {
				t.Fatalf("output %q, want %q", r.After, tt.want)
			}
			if tt.timeout > 0 && time.Since(start) > tt.timeout+4*time.Second {
				t.Errorf("took %s past a bound of %s", time.Since(start), tt.timeout)
			}
		})
	}
}
