package runner

import (
	"context"
	"fmt"
	"github.com/useprickle/prickle/shared/domain/wakeup"
	"path/filepath"
	"slices"
	"time"
)

// taskGoesOn reports whether a task in state is still its assignee's work:
// accepted, working, or waiting (on its owner, mostly).
func taskGoesOn(state string) bool {
	return state == "accepted" || state == "working" || state == "waiting"
}

// releaseClaims lets go of the files a task's runs claimed (claims.json in
// its session dir dir) once a run that ended by itself leaves the task's
// work done for now: the task is no longer the assignee's work (returned,
// completed, cancelled...), or the run was its requester's review. The
// agent's live pulse stops listing them (what else it lists stays), and
// says the run ended when it named this task. A run paused on a call, and
// one whose task goes on, keep them: the next run resumes the work, and
// the pulse goes stale by itself after the project's window. It needs the
// run's token, so it comes before the token ends.
func (r *Runner) releaseClaims(w wakeup.Payload, dir string, paused *Call) {
	c, err := LoadClaims(dir)
	room, ok := r.Tasks.(Room)
	if err != nil || len(c.Files) == 0 || paused != nil || !ok {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.ctx), r.callTimeout())
	defer cancel()
	warn := func(what string, err error) {
		r.Out.Warn("claimed files not released: "+what+"; they are released when the agent's Team Pulse goes stale",
			"task", w.TaskID, "run", w.RunID, "files", len(c.Files), "error", err.Error())
	}
	v, err := r.Tasks.Task(ctx, w.RunToken, w.TaskID)
	if err != nil {
		warn("cannot read the task", err)
		return
	}
	if taskGoesOn(v.State) && w.Reason != wakeup.ReasonResultReturned {
		r.Out.Info("claimed files kept: the task goes on", "task", w.TaskID, "run", w.RunID, "state", v.State, "files", len(c.Files))
		return
	}
	unlock, err := lockClaims(filepath.Dir(dir))
	if err != nil {
		warn("claims lock", err)
		return
	}
	defer unlock()
	s, err := room.ClaimSettings(ctx, w.RunToken, c.Project)
	if err != nil {
		warn("cannot read the project's settings", err)
		return
	}
	entries, err := room.Pulse(ctx, w.RunToken, c.Project)
	if err != nil {
		warn("cannot read Team Pulse", err)
		return
	}
	if own := ownEntry(entries, s.Agent, time.Now(), window(s)); own != nil {
		u := PulseUpdate{Project: c.Project, Availability: own.Availability, Doing: own.Doing, TaskID: own.TaskID, Branch: own.Branch,
			LastDecision: own.LastDecision, Files: slices.DeleteFunc(slices.Clone(own.Files), func(f string) bool { return slices.Contains(c.Files, f) })}
		if own.TaskID != nil && *own.TaskID == c.TaskID {
			u.Availability, u.TaskID, u.LastDecision = "idle", nil, nil
			u.Doing = fmt.Sprintf("Ended its run of task %s (the task is %s).", c.TaskID, v.State)
		}
		if err := room.UpdatePulse(ctx, w.RunToken, u); err != nil {
			warn("update_pulse", err)
			return
		}
	}
	released := len(c.Files)
	c.Files, c.UpdatedAt = []string{}, time.Now().UTC()
	if err := SaveClaims(dir, c); err != nil {
		r.Out.Warn("claims file not saved", "task", w.TaskID, "run", w.RunID, "error", err.Error())
	}
	r.Out.Info("claimed files released", "task", w.TaskID, "run", w.RunID, "state", v.State, "files", released)
}
