package runner

import (
	"bytes"
	"encoding/json"
	"sync"
	"time"
)

// A Codex run's usage: Codex 0.169.0's app server reports tokens, not
// dollars, in thread/tokenUsage/updated notifications: the thread's running
// total (over every run of the task, since the thread is resumed) and the
// last response's. codex-run adds up its own run and ends with one line
// (CodexUsageMsg) that the runner reads from the run's output, as it reads
// Claude Code's result. Its cost is 0: Codex says none.

// CodexUsageMsg is the msg of codex-run's last line, carrying its "usage".
const CodexUsageMsg = "codex-run usage"

// codexTokenUsage is the notification's tokenUsage.
type codexTokenUsage struct {
	Total codexTokens `json:"total"`
	Last  codexTokens `json:"last"`
}

type codexTokens struct {
	InputTokens  int64 `json:"inputTokens"`
	OutputTokens int64 `json:"outputTokens"`
}

// codexUsage is what this run used: the thread's last total less what it
// held before this run's first response.
type codexUsage struct {
	mu          sync.Mutex
	seen        bool
	base, total codexTokens
	model       string
	turns       int
}

// update takes one thread/tokenUsage/updated notification's params.
func (u *codexUsage) update(params json.RawMessage) {
	var p struct {
		TokenUsage *codexTokenUsage `json:"tokenUsage"`
	}
	if json.Unmarshal(params, &p) != nil || p.TokenUsage == nil {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	t := p.TokenUsage
	if !u.seen {
		u.seen = true
		u.base = codexTokens{InputTokens: t.Total.InputTokens - t.Last.InputTokens, OutputTokens: t.Total.OutputTokens - t.Last.OutputTokens}
	}
	u.total = t.Total
}

func (u *codexUsage) setModel(model string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.model = model
}

func (u *codexUsage) turn() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.turns++
}

// report is the run's usage, as the runner reports it to Prickle.
func (u *codexUsage) report(took time.Duration) Usage {
	u.mu.Lock()
	defer u.mu.Unlock()
	return Usage{InputTokens: max(u.total.InputTokens-u.base.InputTokens, 0), OutputTokens: max(u.total.OutputTokens-u.base.OutputTokens, 0),
		Turns: u.turns, DurationMS: took.Milliseconds(), Model: u.model}
}

// templateUsage is what a run of template reported of its model use, read
// from the end of its output: codex-run's last usage line (Claude Code's
// result is read with the rest of it, see runAgent); nil when none.
func templateUsage(template string, stdout []byte) *Usage {
	if template != TemplateCodex {
		return nil
	}
	lines := bytes.Split(bytes.TrimSpace(stdout), []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		var l struct {
			Msg   string `json:"msg"`
			Usage *Usage `json:"usage"`
		}
		if json.Unmarshal(bytes.TrimSpace(lines[i]), &l) == nil && l.Msg == CodexUsageMsg && l.Usage != nil {
			return l.Usage
		}
	}
	return nil
}
