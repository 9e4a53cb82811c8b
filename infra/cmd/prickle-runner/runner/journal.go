package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/useprickle/prickle/shared/domain/wakeup"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Journal keeps the webhook deliveries whose runs have not ended by
// themselves (<state_dir>/wakeups/<agent>/<run>.json, 0600: they hold run
// tokens). Prickle delivers a webhook once, so a run stopped with the
// runner, or lost when it died, is run again from here when the runner
// starts again, and resumes its task's session. A pull claim needs none:
// Prickle delivers it again after its visibility timeout.
type Journal struct {
	Dir string
}

// NewJournal is the journal of the agent whose token is agentToken: two
// agents' runners may share a state dir, and each replays only its own.
func NewJournal(stateDir, agentToken string) Journal {
	sum := sha256.Sum256([]byte(agentToken))
	return Journal{Dir: filepath.Join(stateDir, "wakeups", hex.EncodeToString(sum[:8]))}
}

// Hold records a delivery; its run ending by itself removes it.
func (j Journal) Hold(w wakeup.Payload) (Hold, error) {
	name := safeName(w.RunID) + ".json"
	if err := writeJSON(j.Dir, name, w); err != nil {
		return nil, fmt.Errorf("journal %s: %w", w.RunID, err)
	}
	return journalHold{path: filepath.Join(j.Dir, name)}, nil
}

// Pending lists the recorded deliveries, oldest first.
func (j Journal) Pending() ([]wakeup.Payload, error) {
	entries, err := os.ReadDir(j.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	type dated struct {
		w  wakeup.Payload
		at time.Time
	}
	var found []dated
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		var w wakeup.Payload
		if ok, err := readJSON(filepath.Join(j.Dir, e.Name()), &w); !ok || err != nil || w.TaskID == "" || w.RunToken == "" {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		found = append(found, dated{w, info.ModTime()})
	}
	sort.Slice(found, func(a, b int) bool { return found[a].at.Before(found[b].at) })
	out := make([]wakeup.Payload, len(found))
	for i, f := range found {
		out[i] = f.w
	}
	return out, nil
}

// Hold returns the hold of a delivery the journal already has.
func (j Journal) held(w wakeup.Payload) Hold {
	return journalHold{path: filepath.Join(j.Dir, safeName(w.RunID)+".json")}
}

type journalHold struct{ path string }

func (h journalHold) Done(context.Context) error {
	if err := os.Remove(h.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("journal: %w", err)
	}
	return nil
}

func (journalHold) Keep(context.Context) error { return nil }

func (journalHold) Next() time.Time { return time.Time{} }
