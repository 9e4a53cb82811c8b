package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"
)

// Claims is what a task's runs reported to Team Pulse of the files they
// edit (claims.json beside session.json): the hook adds each file it lets
// a run edit, so a later run of the task (a resumed one, or one after the
// runner restarted) claims them again with its next edit, and the runner
// knows which files to release when the task's work ends.
type Claims struct {
	Agent     string    `json:"agent"`
	Project   string    `json:"project"`
	TaskID    string    `json:"task_id"`
	Files     []string  `json:"files"`
	UpdatedAt time.Time `json:"updated_at"`
}

const (
	claimsFile = "claims.json"
	// claimsLock, in the agent's sessions directory, serialises the
	// read-modify-write of the agent's pulse by its runs' hooks and the runner.
	claimsLock = "claims.lock"
)

// MaxPulseFiles and MaxPulseFile are update_pulse's bounds on files: at most
// 50, each at most 300 characters. A longer path is never claimed.
const (
	MaxPulseFiles = 50
	MaxPulseFile  = 300
)

// LoadClaims reads a task's claims; none yet is the zero Claims.
func LoadClaims(dir string) (Claims, error) {
	var c Claims
	_, err := readJSON(filepath.Join(dir, claimsFile), &c)
	return c, err
}

// SaveClaims writes a task's claims (0600, atomically).
func SaveClaims(dir string, c Claims) error {
	return writeJSON(dir, claimsFile, c)
}

// withFile is files with f added as the newest, keeping at most MaxPulseFiles (the newest).
func withFile(files []string, f string) []string {
	out := slices.DeleteFunc(slices.Clone(files), func(x string) bool { return x == f })
	out = append(out, f)
	if len(out) > MaxPulseFiles {
		out = out[len(out)-MaxPulseFiles:]
	}
	return out
}

// pulseFiles is the files an agent's pulse lists once its task claims
// mine: the task's claims (the newest kept when there are too many), then
// the rest of what the pulse listed, as far as the bound allows.
func pulseFiles(listed, mine []string) []string {
	out := slices.Clone(mine)
	if len(out) > MaxPulseFiles {
		out = out[len(out)-MaxPulseFiles:]
	}
	for _, f := range listed {
		if len(out) == MaxPulseFiles {
			break
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// lockClaims takes the agent's claims lock in agentDir (the parent of its
// tasks' session dirs), waiting for it; the returned func releases it.
func lockClaims(agentDir string) (func(), error) {
	if err := os.MkdirAll(agentDir, 0o700); err != nil {
		return nil, fmt.Errorf("claims lock: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(agentDir, claimsLock), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("claims lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("claims lock: %w", err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		_ = f.Close()
	}, nil
}
