package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Session is what the runner keeps of a task's conversation between its
// runs, so that every later wake-up of the task resumes it instead of
// starting over: which agent session it is, where it runs, and the call its
// last run paused on. It lives in <state_dir>/sessions/<agent>/<task>/session.json.
type Session struct {
	TaskID   string `json:"task_id"`
	Template string `json:"template"`
	// ID is the agent CLI's own session id (Claude Code's --session-id).
	ID string `json:"session_id"`
	// Dir is the directory its runs start in: a session resumes only there.
	Dir string `json:"dir"`
	// Runs counts the runs that used it; LastRun is the newest.
	Runs    int    `json:"runs"`
	LastRun string `json:"last_run"`
	// Paused is the call the last run stopped on, waiting for its owner; the
	// next run resumes that very call. Nil when the last run did not pause.
	Paused    *Call     `json:"paused,omitempty"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Call is one tool call of a run, as its agent CLI made it.
type Call struct {
	ToolUseID string          `json:"tool_use_id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input,omitempty"`
}

// Asked is the last call a run asked its owner about, as the hook recorded
// it (asked.json beside session.json): a resumed conversation that
// did not pause is told it exactly.
type Asked struct {
	Call
	StepID string    `json:"step_id,omitempty"`
	Status string    `json:"status,omitempty"`
	At     time.Time `json:"at"`
}

// Quote is the call as a resume prompt names it: the tool and its input.
func (a *Asked) Quote() string {
	if a == nil || a.Name == "" {
		return "none"
	}
	return clip(a.Name+" "+string(a.Input), 2000)
}

// sessionFile and askedFile are the two files of a task's session directory;
// the runner writes the first, the run's hook the second.
const (
	sessionFile = "session.json"
	askedFile   = "asked.json"
)

// SessionDir is the directory of an agent's session of a task under
// stateDir (two agents' runners may share a machine and a state dir).
func SessionDir(stateDir, agent, taskID string) string {
	return filepath.Join(stateDir, "sessions", safeName(agent), safeName(taskID))
}

// LoadSession reads a task's session; ok is false when it has none yet.
func LoadSession(dir string) (s Session, ok bool, err error) {
	ok, err = readJSON(filepath.Join(dir, sessionFile), &s)
	return s, ok, err
}

// SaveSession writes a task's session (0600, atomically).
func SaveSession(dir string, s Session) error {
	return writeJSON(dir, sessionFile, s)
}

// LoadAsked reads the last call the task's runs asked about; nil if none.
func LoadAsked(dir string) (*Asked, error) {
	var a Asked
	ok, err := readJSON(filepath.Join(dir, askedFile), &a)
	if !ok || err != nil {
		return nil, err
	}
	return &a, nil
}

// SaveAsked records the call a run asked about.
func SaveAsked(dir string, a Asked) error {
	return writeJSON(dir, askedFile, a)
}

// maxStateFile bounds what the runner reads back of its own state files.
const maxStateFile = 1 << 20

func readJSON(path string, v any) (bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	if len(b) > maxStateFile {
		return false, fmt.Errorf("read %s: over %d bytes", path, maxStateFile)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	return true, nil
}

// writeJSON writes v as name in dir through a temporary file and a rename,
// so a reader (or a runner killed mid-write) never sees half a file.
func writeJSON(dir, name string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", name, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("state dir: %w", err)
	}
	f, err := os.CreateTemp(dir, "."+name+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	_, werr := f.Write(b)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := os.Rename(f.Name(), filepath.Join(dir, name)); err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}
