package runner

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"time"

	"github.com/useprickle/prickle/shared/domain/step"
)

// A Codex run's approvals, one at a time: each asked of the owner through
// request_step, waited for, and answered to Codex; refusals kept for the
// next turn.

// answer handles approval requests one at a time (one step waits at a time
// per task: asking two at once would withdraw the first).
func (h *codexHost) answer(ctx context.Context, rpc *rpcConn) {
	for m := range h.approvals {
		if ctx.Err() == nil { // once stopping, requests are left open (and drained)
			h.approve(ctx, rpc, m)
		}
	}
}

// approve asks the owner about one approval request and answers Codex.
func (h *codexHost) approve(ctx context.Context, rpc *rpcConn, m rpcMessage) {
	a, err := mapApproval(m.Method, m.Params, h.items)
	if err != nil {
		h.log.Warn("a malformed approval request is refused", "method", m.Method, "error", err.Error())
		_ = rpc.ReplyError(m.ID, -32602, err.Error())
		return
	}
	reply := func(allow bool) bool {
		if err := rpc.Reply(m.ID, a.Reply(allow)); err != nil {
			h.log.Warn("cannot answer codex", "error", err.Error())
			return false
		}
		return true
	}
	switch {
	case a.Own:
		h.log.Info("approval accepted: a tool of Prickle's own", "tool_name", a.Ask.ToolName)
		reply(true)
		return
	case a.Unsupported != "":
		h.log.Warn("approval declined without asking", "method", m.Method, "why", a.Unsupported)
		reply(false)
		return
	}
	if a.Ask.ToolUseID == "" {
		a.Ask.ToolUseID = "codex-request-" + strings.Trim(string(m.ID), `"`)
	}
	var claims patchGuard
	if a.Ask.ToolName == CodexPatchTool {
		// File claims (codexclaims.go): a change of a file a teammate holds.
		it, _ := h.items.get(fileItemID(m.Params))
		if claims = h.guardPatch(ctx, codexPatchFiles(it.Changes)); claims.deny != "" {
			h.log.Info("approval declined: a teammate holds the file", "tool_name", a.Ask.ToolName, "why", claims.deny)
			if reply(false) {
				h.mu.Lock()
				h.refusals = append(h.refusals, refusal{Ask: a.Ask, Message: claims.deny})
				h.mu.Unlock()
			}
			return
		}
		if claims.reason != "" {
			a.Ask.Reason = clip(claims.reason, maxReason)
		}
	}
	asked := time.Now()
	h.log.Info("approval asked", "tool_name", a.Ask.ToolName, "does", step.Summary(a.Ask.ToolName, a.Ask.Input),
		"input", clip(string(a.Ask.Input), 1000), "tool_use_id", a.Ask.ToolUseID, "reason", a.Ask.Reason, "pid", os.Getpid())
	if err := h.session.SetOpen(&openCall{ToolName: a.Ask.ToolName, Input: a.Ask.Input, RunID: h.env.RunID, AskedAt: asked.UTC()}); err != nil {
		h.log.Warn("cannot record the open call", "error", err.Error())
	}
	ans, err := h.decision(ctx, a.Ask)
	if err != nil {
		h.log.Info("approval left open: the run is stopping", "tool_name", a.Ask.ToolName, "tool_use_id", a.Ask.ToolUseID, "error", err.Error())
		return
	}
	// Codex cannot run another call than the one it asked: an approval of
	// the owner's edit is declined here, and the model is told to make the
	// edited call, which is then allowed once (the same step).
	var editedTo json.RawMessage
	if ans.Status == "approved" || ans.Behavior == "allow" {
		if edited(a.Ask.ToolName, a.Ask.Input, ans.UpdatedInput) {
			editedTo = ans.UpdatedInput
		}
	}
	allow := ans.Behavior == "allow" && editedTo == nil
	if !reply(allow) {
		return // Codex is gone: the call stays recorded for the next run
	}
	if err := h.session.SetOpen(nil); err != nil {
		h.log.Warn("cannot clear the open call", "error", err.Error())
	}
	if allow {
		h.claimPatch(ctx, claims)
	}
	decision := "accept"
	if !allow {
		decision = "decline"
		h.mu.Lock()
		h.refusals = append(h.refusals, refusal{Ask: a.Ask, Message: ans.Message, Edited: editedTo})
		h.mu.Unlock()
	}
	if editedTo != nil {
		decision = "decline: the owner edited the call"
	}
	h.log.Info("approval answered", "tool_name", a.Ask.ToolName, "tool_use_id", a.Ask.ToolUseID, "decision", decision,
		"step", ans.StepID, "status", ans.Status, "message", ans.Message, "waited", time.Since(asked).Round(time.Millisecond).String())
}

// decision asks request_step until the owner has decided: a pending step
// keeps the call waiting (asked again after Poll, doubling to PollMax, and
// at once on SIGUSR1). It fails only when ctx ends. It looks first, asking
// without tool_use_id (an approved step is then answered "approved", left
// for the permission layer, and nothing is used): an approval of the call as
// asked is then taken with tool_use_id, which uses it once; an approval of
// the owner's edit is left for the edited call the model is told to make.
func (h *codexHost) decision(ctx context.Context, ask StepAsk) (StepAnswer, error) {
	look := ask
	look.ToolUseID = ""
	wait := h.opt.Poll
	for first := true; ; first = false {
		ans, err := h.requestStep(ctx, look)
		if err == nil && ans.Status == "approved" && !edited(ask.ToolName, ask.Input, ans.UpdatedInput) {
			ans, err = h.requestStep(ctx, ask)
		}
		switch {
		case err == nil && ans.Status != "pending":
			return ans, nil
		case errors.Is(err, ErrRefused):
			return StepAnswer{Status: "refused", Behavior: "deny", Message: err.Error()}, nil
		case ctx.Err() != nil:
			return StepAnswer{}, ctx.Err()
		case err != nil:
			h.log.Warn("request_step failed; asking again", "error", err.Error(), "in", wait.String())
		case first:
			h.log.Info("waiting for the owner", "step", ans.StepID, "tool_use_id", ask.ToolUseID, "pid", os.Getpid())
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return StepAnswer{}, ctx.Err()
		case <-h.wake:
			h.log.Info("woken: asking for the owner's decision now", "tool_use_id", ask.ToolUseID)
		case <-t.C:
		}
		t.Stop()
		wait = min(2*wait, h.opt.PollMax)
	}
}

// requestStep is one request_step call of the run, within a minute.
func (h *codexHost) requestStep(ctx context.Context, ask StepAsk) (StepAnswer, error) {
	call, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return h.steps.RequestStep(call, h.env.RunToken, ask)
}

func (h *codexHost) takeRefusals() []refusal {
	h.mu.Lock()
	defer h.mu.Unlock()
	rs := h.refusals
	h.refusals = nil
	return rs
}
