package runner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// codexSession is what a task's Codex runs keep in its session directory
// (PRICKLE_SESSION_DIR): the task's Codex thread, and the call a run had
// asked the owner about when it ended without an answer (the next run
// tells the model to make exactly that call again).
type codexSession struct{ dir string }

const (
	codexThreadFile = "codex-thread"
	codexOpenFile   = "codex-open-call.json"
)

// openCall is an approval a run asked and did not answer before it ended.
type openCall struct {
	ToolName string          `json:"tool_name"`
	Input    json.RawMessage `json:"input"`
	RunID    string          `json:"run_id"`
	AskedAt  time.Time       `json:"asked_at"`
}

// Thread is the task's Codex thread id, "" before its first run.
func (s codexSession) Thread() (string, error) {
	b, err := os.ReadFile(filepath.Join(s.dir, codexThreadFile))
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read the task's Codex thread: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// SetThread records the task's Codex thread id.
func (s codexSession) SetThread(id string) error {
	return s.write(codexThreadFile, []byte(id+"\n"))
}

// Open is the call a previous run left asked and unanswered, or nil.
func (s codexSession) Open() (*openCall, error) {
	b, err := os.ReadFile(filepath.Join(s.dir, codexOpenFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the open call: %w", err)
	}
	var c openCall
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("read the open call: %w", err)
	}
	return &c, nil
}

// SetOpen records the call waiting for the owner; nil clears it.
func (s codexSession) SetOpen(c *openCall) error {
	if c == nil {
		if err := os.Remove(filepath.Join(s.dir, codexOpenFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("clear the open call: %w", err)
		}
		return nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // the next run's prompt quotes the input as it was asked
	if err := enc.Encode(c); err != nil {
		return fmt.Errorf("encode the open call: %w", err)
	}
	return s.write(codexOpenFile, b.Bytes())
}

// write replaces name atomically (a run killed mid-write leaves the old file).
func (s codexSession) write(name string, b []byte) error {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("session dir: %w", err)
	}
	tmp, err := os.CreateTemp(s.dir, name+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if _, err := tmp.Write(b); err != nil {
		_ = tmp.Close()
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := tmp.Close(); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(s.dir, name)); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}
