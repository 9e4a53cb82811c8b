package runner

import (
	"fmt"
	"github.com/useprickle/prickle/shared/domain/wakeup"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// runState is what a run continues — the task's session as it stood and
// the last call asked — and which session the run used.
type runState struct {
	session   Session
	asked     *Asked
	sessionID string
	resumed   bool
}

// agentResult is what the runner learnt from the agent CLI's own report.
type agentResult struct {
	paused *Call
	usage  *Usage
}

// session reads what the task's earlier runs left in dir; a file the runner
// cannot read starts the run afresh (and says so).
func (r *Runner) session(dir string, w wakeup.Payload) runState {
	var st runState
	s, ok, err := LoadSession(dir)
	if err != nil {
		r.Out.Warn("task session unreadable; a new conversation starts", "task", w.TaskID, "run", w.RunID, "error", err.Error())
	}
	if ok {
		st.session = s
	}
	if st.asked, err = LoadAsked(dir); err != nil {
		r.Out.Warn("task's asked call unreadable", "task", w.TaskID, "run", w.RunID, "error", err.Error())
	}
	return st
}

// tailSize is how much of a run's standard output the runner keeps to read
// the agent CLI's result from (the rest is only in the run's log).
const tailSize = 1 << 20

// runAgent starts the run and waits for it. For Claude Code it records the
// session before the start (so a runner that dies leaves it to resume),
// reads the run's result (the call it paused on, its usage) into the
// session afterwards, and when a session cannot be resumed starts a new
// conversation at once, told the call the task's runs last asked about.
func (r *Runner) runAgent(p Project, slug string, w wakeup.Payload, dir string, st *runState, logFile io.Writer, logPath string) (Exit, agentResult) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		r.Out.Error("run not started: session dir", "task", w.TaskID, "run", w.RunID, "error", err.Error())
		return Exit{Code: -1, StartError: err.Error()}, agentResult{}
	}
	for attempt := 0; ; attempt++ {
		cmd, err := BuildCommand(p, Launch{MCPURL: r.Config.MCPURL(), Project: slug, Wake: w, MCPDir: filepath.Join(r.Config.LogDir, "mcp"),
			Base: r.Env, Self: r.Self, SessionDir: dir, Session: st.session, Asked: st.asked})
		if err != nil {
			r.Out.Error("run not started", "task", w.TaskID, "run", w.RunID, "error", err.Error())
			return Exit{Code: -1, StartError: err.Error()}, agentResult{}
		}
		st.sessionID, st.resumed = cmd.SessionID, cmd.Resume
		if cmd.SessionID != "" {
			s := Session{TaskID: w.TaskID, Template: p.Template, ID: cmd.SessionID, Dir: cmd.Dir, Runs: 1, LastRun: w.RunID, UpdatedAt: time.Now().UTC()}
			if cmd.Resume {
				s.Runs = st.session.Runs + 1
			}
			if err := SaveSession(dir, s); err != nil {
				r.Out.Warn("task session not saved: a later run starts a new conversation", "task", w.TaskID, "run", w.RunID, "error", err.Error())
			}
			st.session = s
		}
		fmt.Fprintf(logFile, "# prickle-runner: run %s for task %s (%s, resumes %q) in %s, session %q (resumed: %v)\n# command: %s\n",
			w.RunID, w.TaskID, w.Reason, w.ResumesRun, cmd.Dir, cmd.SessionID, cmd.Resume, strings.Join(cmd.Argv, " "))
		msg := "run start"
		if attempt > 0 {
			msg = "run start: a new conversation, as the session could not be resumed"
		}
		r.Out.Info(msg, "task", w.TaskID, "run", w.RunID, "reason", w.Reason, "project", slug, "template", p.Template,
			"session", cmd.SessionID, "resume", cmd.Resume, "dir", cmd.Dir, "log", logPath)
		tail := &tailBuffer{max: tailSize}
		exit := runProcess(r.ctx, cmd, logFile, io.MultiWriter(logFile, tail), r.Config.RunTimeout, r.Config.Grace, r.started(w.TaskID, cmd))
		r.mu.Lock()
		delete(r.live, w.TaskID)
		r.mu.Unlock()
		if cmd.MCPConfig != "" {
			_ = os.Remove(cmd.MCPConfig)
		}
		if p.Template != TemplateClaude {
			return exit, agentResult{usage: r.priceUsage(w, templateUsage(p.Template, tail.buf))}
		}
		res, ok := parseClaudeResult(tail.buf)
		if ok {
			st.session.Paused = res.Paused()
			if res.SessionID != "" {
				st.session.ID = res.SessionID
			}
			st.session.UpdatedAt = time.Now().UTC()
			if err := SaveSession(dir, st.session); err != nil {
				r.Out.Warn("task session not saved", "task", w.TaskID, "run", w.RunID, "error", err.Error())
			}
			return exit, agentResult{paused: st.session.Paused, usage: res.usage()}
		}
		if cmd.Resume && attempt == 0 && !exit.Stopped && !exit.TimedOut && exit.StartError == "" {
			fmt.Fprintf(logFile, "\n# prickle-runner: the run %s without a result: session %s could not be resumed; a new conversation starts\n",
				exit.Describe(r.Config.RunTimeout), cmd.SessionID)
			st.session = Session{}
			continue
		}
		return exit, agentResult{}
	}
}

// started records the process of a wakeable run of the task, so that a
// wake-up of the task arriving while it goes reaches it (see Offer).
func (r *Runner) started(taskID string, c Command) func(*os.Process) {
	if !c.Wakeable {
		return nil
	}
	return func(p *os.Process) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.live[taskID] = p
	}
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}
