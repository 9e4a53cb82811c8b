package runner

import (
	"fmt"
	"os"
	"path/filepath"
)

// withSessionDir gives a run its task's session directory,
// <log_dir>/sessions/<task> (0700), kept across the task's runs, as
// PRICKLE_SESSION_DIR: a Codex run keeps the task's thread there.
func withSessionDir(c *Command, logDir, taskID string) error {
	dir := filepath.Join(logDir, "sessions", safeName(taskID))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("session dir: %w", err)
	}
	c.Env = append(c.Env, "PRICKLE_SESSION_DIR="+dir)
	return nil
}
