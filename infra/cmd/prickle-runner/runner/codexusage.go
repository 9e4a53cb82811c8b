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
// last response's, by turn; a resumed thread reports the previous run's
// last turn again. codex-run adds up the turns it started and ends with one
// line (CodexUsageMsg) that the runner reads from the run's output, as it
// reads Claude Code's result. Its cost is 0: Codex says none.

// CodexUsageMsg is the msg of codex-run's last line, carrying its "usage".
const CodexUsageMsg = "codex-run usage"

// codexTokens are the counts of a notification's total or last.
type codexTokens struct {
	InputTokens  int64 `json:"inputTokens"`
	OutputTokens int64 `json:"outputTokens"`
}

// turnTokens is one turn's tokens: the thread's total before its first
// response, and the latest.
type turnTokens struct{ before, total codexTokens }

// codexUsage is what this run used: over the turns it started, each
// turn's latest total less the total before it. A resumed thread also
// reports the total of the previous run's last turn; that turn is not one
// of this run's, so it counts nothing here.
type codexUsage struct {
	mu     sync.Mutex
	byTurn map[string]*turnTokens
	turns  []string
	model  string
}

// update takes one thread/tokenUsage/updated notification's params.
func (u *codexUsage) update(params json.RawMessage) {
	var p struct {
		TurnID     string `json:"turnId"`
		TokenUsage *struct {
			Total codexTokens `json:"total"`
			Last  codexTokens `json:"last"`
		} `json:"tokenUsage"`
	}
	if json.Unmarshal(params, &p) != nil || p.TokenUsage == nil || p.TurnID == "" {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.byTurn == nil {
		u.byTurn = map[string]*turnTokens{}
	}
	t, ok := u.byTurn[p.TurnID]
	if !ok {
		total, last := p.TokenUsage.Total, p.TokenUsage.Last
		t = &turnTokens{before: codexTokens{InputTokens: total.InputTokens - last.InputTokens, OutputTokens: total.OutputTokens - last.OutputTokens}}
		u.byTurn[p.TurnID] = t
	}
	t.total = p.TokenUsage.Total
}

func (u *codexUsage) setModel(model string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.model = model
}

// turn records a turn this run started.
func (u *codexUsage) turn(id string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.turns = append(u.turns, id)
}

// report is the run's usage, as the runner reports it to Prickle.
func (u *codexUsage) report(took time.Duration) Usage {
	u.mu.Lock()
	defer u.mu.Unlock()
	r := Usage{Turns: len(u.turns), DurationMS: took.Milliseconds(), Model: u.model}
	for _, id := range u.turns {
		if t := u.byTurn[id]; t != nil {
			r.InputTokens += max(t.total.InputTokens-t.before.InputTokens, 0)
			r.OutputTokens += max(t.total.OutputTokens-t.before.OutputTokens, 0)
		}
	}
	return r
}

// templateUsage is what a run of template reported of its model use, read
// from the end of its output: codex-run's last usage line (Claude Code's
// result is read with the rest of it, see runAgent); nil when none.
func templateUsage(template string, stdout []byte) *Usage {
	msg := CodexUsageMsg
	switch template {
	case TemplateCodex:
	case TemplateQwen, TemplateGemini, TemplateCopilot, TemplateOpencode:
		msg = AgentUsageMsg
	default:
		return nil
	}
	lines := bytes.Split(bytes.TrimSpace(stdout), []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		var l struct {
			Msg   string `json:"msg"`
			Usage *Usage `json:"usage"`
		}
		if json.Unmarshal(bytes.TrimSpace(lines[i]), &l) == nil && l.Msg == msg && l.Usage != nil {
			return l.Usage
		}
	}
	return nil
}
