package runner

// The opencode template's files: the user's own global config (read, never
// written), the gate plugin of the run, and the task's config directory,
// which opencode must take as already installed.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// opencodePluginVersion is the @opencode-ai/plugin opencode 1.18.33 installs
// into every config directory it reads (an npm install it waits for at
// start, some 70 s when the registry cannot be reached).
const opencodePluginVersion = "1.18.33"

// opencodeUserConfig is the user's own global opencode config: config.json,
// opencode.json and opencode.jsonc of their config directory, then the file
// their OPENCODE_CONFIG names, opencode.json(c) of their OPENCODE_CONFIG_DIR
// and OPENCODE_CONFIG_CONTENT, merged in that order as opencode merges
// them, and OPENCODE_PERMISSION as its permission. (The run's environment
// blanks the last three: the run's config has them, and opencode would
// npm-install into that directory.)
func opencodeUserConfig(getenv func(string) string) (map[string]any, error) {
	dir := filepath.Join(xdgDir(getenv, "XDG_CONFIG_HOME", ".config"), "opencode")
	paths := []string{filepath.Join(dir, "config.json"), filepath.Join(dir, "opencode.json"), filepath.Join(dir, "opencode.jsonc")}
	if p := getenv("OPENCODE_CONFIG"); p != "" {
		paths = append(paths, p)
	}
	if d := getenv("OPENCODE_CONFIG_DIR"); d != "" {
		paths = append(paths, filepath.Join(d, "opencode.json"), filepath.Join(d, "opencode.jsonc"))
	}
	cfg := map[string]any{}
	for _, p := range paths {
		m, err := userSettings(p)
		if err != nil {
			return nil, err
		}
		mergeConfig(cfg, m)
	}
	for _, kv := range [][2]string{{"OPENCODE_CONFIG_CONTENT", ""}, {"OPENCODE_PERMISSION", "permission"}} {
		v := strings.TrimSpace(getenv(kv[0]))
		if v == "" {
			continue
		}
		var m any
		if err := json.Unmarshal([]byte(v), &m); err != nil {
			return nil, fmt.Errorf("read your %s: %w", kv[0], err)
		}
		if kv[1] != "" {
			m = map[string]any{kv[1]: m}
		}
		if mm, ok := m.(map[string]any); ok {
			mergeConfig(cfg, mm)
		}
	}
	delete(cfg, "$schema")
	return cfg, nil
}

// mergeConfig merges src into dst, objects key by key, anything else replaced.
func mergeConfig(dst, src map[string]any) {
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				mergeConfig(dm, sm)
				continue
			}
		}
		dst[k] = v
	}
}

// seedOpencodeConfigDir makes dir one opencode takes as installed: it skips
// its npm install of @opencode-ai/plugin into a config directory that has
// node_modules and a package-lock.json whose root lists it. The gate plugin
// imports nothing from it, so nothing is installed.
func seedOpencodeConfigDir(dir string) error {
	if err := os.MkdirAll(filepath.Join(dir, "node_modules"), 0o700); err != nil {
		return fmt.Errorf("opencode's config dir: %w", err)
	}
	deps := map[string]string{"@opencode-ai/plugin": opencodePluginVersion}
	files := map[string]any{
		"package.json":      map[string]any{"private": true, "dependencies": deps},
		"package-lock.json": map[string]any{"lockfileVersion": 3, "requires": true, "packages": map[string]any{"": map[string]any{"dependencies": deps}}},
	}
	for name, v := range files {
		b, _ := json.Marshal(v) // maps of strings: cannot fail
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			return fmt.Errorf("opencode's config dir: %w", err)
		}
	}
	return nil
}

// writeOpencodePlugin writes the run's gate plugin: its config hook puts
// back permission (the user's own; none: opencode's defaults), and its
// tool.execute.before runs `<self> hook --cli opencode` with the call on
// stdin and lets it run only on {"decision":"allow"} from a gate that
// exited 0 within timeout; on anything else it throws, so opencode does
// not make the call and the model reads the message. Its
// tool.execute.after runs `<self> hook --cli opencode --after` after bash
// (what the command changed is claimed); a failure there (an exit, no
// answer in time, anything but JSON) only leaves the note out.
func writeOpencodePlugin(path, self string, permission any, timeout time.Duration) error {
	restore, err := json.Marshal(permission)
	if err != nil {
		return fmt.Errorf("your opencode permission: %w", err)
	}
	argv, _ := json.Marshal([]string{self, HookCommand, AgentHookFlag, TemplateOpencode})
	after, _ := json.Marshal([]string{self, HookCommand, AgentHookFlag, TemplateOpencode, AfterHookFlag})
	shell, _ := json.Marshal(opencodeShell)
	failed, _ := json.Marshal(gateFailed)
	src := strings.NewReplacer("__ARGV__", string(argv), "__AFTER__", string(after), "__SHELL__", string(shell),
		"__RESTORE__", string(restore), "__FAILED__", string(failed),
		"__TIMEOUT_MS__", fmt.Sprint(timeout.Milliseconds())).Replace(opencodePlugin)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		return fmt.Errorf("write the gate plugin: %w", err)
	}
	return nil
}

// opencodeShell is opencode's shell tool.
const opencodeShell = "bash"

// opencodePlugin is the gate plugin's source (placeholders __…__).
const opencodePlugin = `// Prickle's gate, written by prickle-runner for this run only.
import { spawn } from "node:child_process";

const GATE = __ARGV__;
const AFTER = __AFTER__;
const SHELL = __SHELL__;
const RESTORE = __RESTORE__;
const FAILED = __FAILED__;
const TIMEOUT_MS = __TIMEOUT_MS__;

// run starts argv with call on stdin: the JSON it answers, exiting 0 within TIMEOUT_MS.
function run(argv, call) {
  return new Promise((resolve, reject) => {
    let out = "";
    let done = false;
    const finish = (f, v) => { if (!done) { done = true; clearTimeout(timer); f(v); } };
    // Its own process group, so that a gate past its time is killed whole.
    const p = spawn(argv[0], argv.slice(1), { stdio: ["pipe", "pipe", "ignore"], detached: true });
    const timer = setTimeout(() => {
      try { process.kill(-p.pid, "SIGKILL"); } catch { p.kill("SIGKILL"); }
      p.stdout.destroy();
      finish(reject, new Error("timeout"));
    }, TIMEOUT_MS);
    p.on("error", (e) => finish(reject, e));
    p.stdout.on("data", (d) => { out += d; });
    p.stdin.on("error", () => {});
    p.on("close", (code, signal) => {
      if (code !== 0 || signal) return finish(reject, new Error("exit " + (signal || code)));
      try { finish(resolve, JSON.parse(out)); } catch (e) { finish(reject, e); }
    });
    p.stdin.end(JSON.stringify(call));
  });
}

export const PrickleGate = async () => {
  const notes = new Map();
  return {
    config: async (cfg) => {
      if (RESTORE === null) delete cfg.permission;
      else cfg.permission = RESTORE;
    },
    "tool.execute.before": async (input, output) => {
      let a;
      try {
        a = await run(GATE, { tool: input.tool, sessionID: input.sessionID, callID: input.callID, args: output.args });
      } catch {
        throw new Error(FAILED);
      }
      if (!a || typeof a !== "object" || a.decision !== "allow") {
        throw new Error(a && typeof a.reason === "string" && a.reason !== "" ? a.reason : FAILED);
      }
      if (a.args !== undefined) {
        if (!a.args || typeof a.args !== "object" || Array.isArray(a.args) || !output.args || typeof output.args !== "object") throw new Error(FAILED);
        for (const k of Object.keys(output.args)) delete output.args[k];
        Object.assign(output.args, a.args);
      }
      if (typeof a.note === "string" && a.note !== "") notes.set(input.callID, a.note);
    },
    "tool.execute.after": async (input, output) => {
      const said = [];
      if (notes.has(input.callID)) said.push(notes.get(input.callID));
      notes.delete(input.callID);
      if (input.tool === SHELL) {
        // What the command changed is claimed; a failure here claims nothing and the run goes on.
        try {
          const a = await run(AFTER, { tool: input.tool, sessionID: input.sessionID, callID: input.callID, args: input.args ?? {} });
          if (a && typeof a.note === "string" && a.note !== "") said.push(a.note);
        } catch {}
      }
      if (!said.length || !output) return;
      const note = said.join("\n");
      if (typeof output.output === "string") output.output = note + "\n\n" + output.output;
      else if (Array.isArray(output.content)) output.content.unshift({ type: "text", text: note });
    },
  };
};
`
