package runner

// The files of an agent-run: the user's own settings (read, JSON with
// comments), the run's secret files (0600), and the CLI's JSON output.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// userSettings reads the user's own settings file of a CLI (none: empty).
func userSettings(path string) (map[string]any, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]any{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read your settings %s: %w", path, err)
	}
	m := map[string]any{}
	if len(bytes.TrimSpace(b)) == 0 {
		return m, nil
	}
	if err := json.Unmarshal(stripJSONComments(b), &m); err != nil {
		return nil, fmt.Errorf("read your settings %s: %w", path, err)
	}
	return m, nil
}

// stripJSONComments drops // line comments outside strings (the CLIs'
// settings files may have them).
func stripJSONComments(b []byte) []byte {
	var out []byte
	in := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if in {
			out = append(out, c)
			if c == '\\' && i+1 < len(b) {
				i++
				out = append(out, b[i])
			} else if c == '"' {
				in = false
			}
			continue
		}
		if c == '"' {
			in = true
		}
		if c == '/' && i+1 < len(b) && b[i+1] == '/' {
			for i < len(b) && b[i] != '\n' {
				i++
			}
			if i < len(b) {
				out = append(out, '\n')
			}
			continue
		}
		out = append(out, c)
	}
	return out
}

// writeSecretJSON writes v at path, mode 0600 (it may hold the run token).
func writeSecretJSON(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	_ = os.Remove(path)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	_, werr := f.Write(b)
	if err := errors.Join(werr, f.Close()); err != nil {
		_ = os.Remove(path)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// lastJSON is the last line of out that starts with open ('{' or '['), or
// all of out from the last line that does (a pretty-printed document).
func lastJSON(out []byte, open byte) []byte {
	out = bytes.TrimSpace(out)
	lines := bytes.Split(out, []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		l := bytes.TrimSpace(lines[i])
		if len(l) == 0 || l[0] != open {
			continue
		}
		if json.Valid(l) {
			return l
		}
		// A document over several lines: from here to the end.
		rest := bytes.TrimSpace(bytes.Join(lines[i:], []byte("\n")))
		if json.Valid(rest) {
			return rest
		}
	}
	return nil
}

// firstKey is the alphabetically first key of m ("" when empty).
func firstKey[V any](m map[string]V) string {
	k := ""
	for name := range m {
		if k == "" || name < k {
			k = name
		}
	}
	return k
}

// prickleHTTPServer is Prickle's MCP server as the settings of Qwen Code and
// Gemini CLI name one (mcpServers.<name>): streamable HTTP with the run
// token, trusted so its calls reach the gate without a prompt of its own.
func prickleHTTPServer(r *agentRun) map[string]any {
	return map[string]any{PrickleServer: map[string]any{"httpUrl": r.mcpURL,
		"headers": map[string]string{"Authorization": "Bearer " + r.runToken}, "trust": true}}
}

// sessionFlag continues the task's session (resume, e.g. -r) or starts it
// under the id the runner chose (start, e.g. --session-id).
func sessionFlag(r *agentRun, resume, start string) []string {
	if r.resume {
		return []string{resume, r.sessionID}
	}
	return []string{start, r.sessionID}
}
