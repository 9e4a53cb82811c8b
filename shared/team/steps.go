package team

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/domain/event"
	"github.com/useprickle/prickle/shared/domain/grant"
	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/domain/task"
)

// MaxStepMessage is the longest message request_step answers (its output
// schema's message maxLength; a catalog test ties the two).
const MaxStepMessage = 500

// The answers request_step gives, word for word as the tool reference promises.
const (
	msgPending  = "still waiting for your owner: checkpoint, then end your turn; you'll be resumed when your owner decides"
	msgLeftToPL = "allowed, left for your permission layer: make exactly that call now"
	msgRefused  = "refused by your owner; don't try it again: finish without it, or return what you have and say why"
	msgAllowed  = "allowed: make exactly that call, once, now"
	// An approval of the call as the owner edited it: the run asked the
	// edited call (that), or the call as asked (this edit, quoted after).
	msgEditedThat     = "allowed as your owner edited it: make exactly that call, once, now"
	msgEditedThis     = "allowed as your owner edited it: your permission layer makes this call instead of the one you asked, once, now: "
	msgEditedLeftThat = "allowed as your owner edited it, left for your permission layer: make exactly that call now"
	msgEditedLeftThis = "allowed as your owner edited it, left for your permission layer: make this call (updatedInput) instead of the one you asked, now: "
	// msgJoined is msgPending for a step that lost the race to ask, naming
	// the step that waits; a closing parenthesis follows.
	msgJoined = msgPending + " (your owner is asked about step %s, a %s call asked at the same moment: one step waits at a time, so ask for this call again when you are resumed"
)

// maxAskAttempts bounds how many times request_step reads the task and its
// steps and tries to store its answer, when another write of the task (a
// racing ask, a checkpoint, the owner's decision) lands in between.
const maxAskAttempts = 5

// asking is one request_step call as it is answered, across its attempts.
type asking struct {
	c         identity.Caller
	in        RequestStepInput
	canonical []byte
	fp        string
	now       time.Time
	project   *Project
	// seen are the task's steps at the first read: a step waiting that is
	// not among them was asked at the same moment.
	seen map[string]bool
	// ns is the new step, and al what allows it without asking, once known.
	ns step.Step
	al *allowance
	// debited says the allowance's debit went into a stored step.
	debited bool
}

// RequestStep asks the caller's owner before a destructive, spending or
// outbound call, and answers like a permission prompt: allow or deny. When
// a racing write of the task lands first, it reads the task again and
// answers from what it finds, so no racer is left with an error. It checks
// the call's bounds (the amount, the input) itself; a caller that checked
// them already calls RequestCheckedStep.
func (s *Service) RequestStep(ctx context.Context, c identity.Caller, in RequestStepInput) (RequestStepOutput, error) {
	return s.requestStep(ctx, c, in, nil)
}

// RequestCheckedStep is RequestStep for a call whose bounds its caller has
// checked: the amount (step.CheckAmountValue, on the number as written) and
// the input, whose canonical JSON (what step.CheckInput returned) is
// canonical. The MCP edge checks every call's arguments so, before the tool
// runs, and nothing here checks them again.
func (s *Service) RequestCheckedStep(ctx context.Context, c identity.Caller, in RequestStepInput, canonical []byte) (RequestStepOutput, error) {
	if canonical == nil {
		return RequestStepOutput{}, errors.New("request_step: the input was not checked")
	}
	return s.requestStep(ctx, c, in, canonical)
}

// requestStep answers one request_step call; canonical is the input checked
// by the caller, or nil to check the call's bounds here (once the caller is
// known to be allowed to ask, as every refusal comes in that order).
func (s *Service) requestStep(ctx context.Context, c identity.Caller, in RequestStepInput, canonical []byte) (RequestStepOutput, error) {
	if c.Kind != identity.KindRun {
		return RequestStepOutput{}, task.Refusef("request_step is for a woken run only: it needs the run token Prickle gives a run it wakes for a task, and %s called with its agent token", c.Agent)
	}
	t, err := s.askableTask(ctx, c)
	if err != nil {
		return RequestStepOutput{}, err
	}
	if canonical == nil {
		if canonical, err = checkStep(in); err != nil {
			return RequestStepOutput{}, err
		}
	}
	a := &asking{c: c, in: in, canonical: canonical, fp: step.Fingerprint(t.ID, in.ToolName, canonical), now: s.now()}
	var out RequestStepOutput
	for attempt := 1; ; attempt++ {
		if attempt > 1 {
			if t, err = s.askableTask(ctx, c); err != nil {
				break
			}
		}
		out, err = s.askOnce(ctx, a, t)
		if !errors.Is(err, ErrConflict) || attempt == maxAskAttempts {
			break
		}
	}
	if a.al != nil && a.al.refund != nil && !a.debited {
		a.al.refund(context.WithoutCancel(ctx))
	}
	if errors.Is(err, ErrConflict) {
		return RequestStepOutput{}, task.Refusef("task %s changed while asking, %d times; call request_step again", t.ID, maxAskAttempts)
	}
	if err != nil {
		return RequestStepOutput{}, err
	}
	return out, nil
}

// checkStep bounds a call's amount and input, as the MCP edge does before
// the tool runs, for callers of RequestStep; a crossed bound is a refusal.
func checkStep(in RequestStepInput) ([]byte, error) {
	if err := in.Amount.Check(); err != nil {
		return nil, task.Refusef("amount.value %v; nothing was stored or sent", err)
	}
	input := in.Input
	if len(input) == 0 {
		input = json.RawMessage(`{}`)
	}
	canonical, err := step.CheckInput(input)
	var limit *step.InputLimitError
	if errors.As(err, &limit) {
		return nil, task.Refusef("%v; nothing was stored or sent", limit)
	}
	if err != nil {
		return nil, task.Refusef("input must be a JSON object: %v", err)
	}
	return canonical, nil
}

// askableTask reads the caller's task, which the caller must be able to ask on.
func (s *Service) askableTask(ctx context.Context, c identity.Caller) (task.Task, error) {
	t, err := s.writableTask(ctx, c, c.TaskID)
	if err != nil {
		return task.Task{}, err
	}
	if err := task.CheckAsk(t, c.Agent); err != nil {
		return task.Task{}, err
	}
	return t, nil
}

// askOnce answers from one read of the task's steps: the step this call
// already is, else a new step allowed at once, joined to one asked at the
// same moment, or asked of the owner. ErrConflict means a racing write
// landed first and nothing was stored.
func (s *Service) askOnce(ctx context.Context, a *asking, t task.Task) (RequestStepOutput, error) {
	c, now := a.c, a.now
	// The project's settings (once) and the task's steps are read at once.
	var projectErr error
	var wg sync.WaitGroup
	if a.project == nil {
		wg.Go(func() {
			var p Project
			if p, projectErr = s.taskProject(ctx, c, t); projectErr == nil {
				a.project = &p
			}
		})
	}
	steps, err := s.Store.StepsForTask(ctx, t.ID)
	wg.Wait()
	if projectErr != nil {
		return RequestStepOutput{}, projectErr
	}
	if err != nil {
		return RequestStepOutput{}, fmt.Errorf("read steps of task %s: %w", t.ID, err)
	}
	first := a.seen == nil
	if first {
		a.seen = map[string]bool{}
	}
	var change StepChange
	var match *step.Step
	var pending []step.Step
	for _, st := range steps {
		if first {
			a.seen[st.ID] = true
		}
		eff := st.Effective(now)
		if eff.Status != st.Status {
			// Expiry is checked on every read; TTL deletion lags behind.
			change.Steps = append(change.Steps, StepWrite{Step: eff, Prev: st.Status})
		}
		if eff.Answers(a.fp) && eff.Live() && (eff.RunID == c.RunID || (c.ResumesRun != "" && eff.RunID == c.ResumesRun)) {
			match = &eff
		}
		if eff.Status == step.Pending {
			pending = append(pending, eff)
		}
	}
	change.At = now

	if match != nil {
		out, err := s.answer(ctx, *match, a, change)
		if err == nil {
			s.publish(ctx, expiredEvents(change, now)...)
		}
		return out, err
	}

	// A new step. A live grant or the owner's budget may allow it at once.
	if a.al == nil {
		deadline := a.project.StepDeadline
		if deadline <= 0 {
			deadline = step.DefaultPendingDeadline
		}
		in := a.in
		a.ns = step.Step{
			ID: s.NewID("stp_"), TaskID: t.ID, Project: t.Project, Agent: c.Agent, RunID: c.RunID,
			ToolName: in.ToolName, Input: a.canonical, Fingerprint: a.fp,
			Kind: in.Kind, Target: in.Target, Amount: in.Amount, Reason: in.Reason,
			Status: step.Pending, CreatedAt: now, ExpiresAt: now.Add(deadline),
		}
		call := grant.Call{Project: t.Project, Agent: c.Agent, TaskID: t.ID, ToolName: in.ToolName, Canonical: a.canonical, Fingerprint: a.fp}
		al, err := s.allowance(ctx, call, a.ns, now)
		if err != nil {
			return RequestStepOutput{}, err
		}
		a.al = &al
	}
	if a.al.by != "" {
		out, err := s.allowAtOnce(ctx, a.ns, *a.al, a.in.ToolUseID, change, now)
		a.debited = err == nil
		return out, err
	}
	ns := a.ns
	ns.BudgetNote = a.al.note
	for _, w := range pending {
		if !a.seen[w.ID] {
			return s.joinWaiting(ctx, ns, w, change)
		}
	}

	// Asked of the owner: it withdraws the step waiting, and the task waits on the owner.
	for _, old := range pending {
		old.Status = step.Withdrawn
		change.Steps = append(change.Steps, StepWrite{Step: old, Prev: step.Pending})
	}
	change.Steps = append(change.Steps, StepWrite{Step: ns})
	asked, err := task.AskOwner(t, c.Agent, a.in.ToolName, ns.ID, now)
	if err != nil {
		return RequestStepOutput{}, err
	}
	change.Move, change.PrevVersion = &asked, t.Version
	if err := s.Store.SaveSteps(ctx, change); err != nil {
		return RequestStepOutput{}, fmt.Errorf("store step: %w", err)
	}
	s.publish(ctx, append(expiredEvents(change, now), event.ForStep(event.StepRequested, ns, c.Agent, now))...)
	msg := msgPending
	if ns.BudgetNote != "" {
		msg = truncate(msgPending+" ("+ns.BudgetNote+")", MaxStepMessage)
	}
	return RequestStepOutput{StepID: ns.ID, Status: step.Pending, Behavior: "deny", Message: msg}, nil
}

// joinWaiting answers a new step that lost the race to ask to waiting, a
// step asked at the same moment. One step waits at a time, so the new step
// is stored withdrawn (the owner is asked once, about the step that waits),
// and the run is told to wait for its owner too and to ask for this call
// again once it is resumed.
func (s *Service) joinWaiting(ctx context.Context, ns step.Step, waiting step.Step, change StepChange) (RequestStepOutput, error) {
	ns.Status = step.Withdrawn
	change.Steps = append(change.Steps, StepWrite{Step: ns})
	if err := s.Store.SaveSteps(ctx, change); err != nil {
		return RequestStepOutput{}, fmt.Errorf("store step: %w", err)
	}
	s.publish(ctx, expiredEvents(change, change.At)...)
	msg := fmt.Sprintf(msgJoined, waiting.ID, waiting.ToolName)
	if ns.BudgetNote != "" {
		msg += "; " + ns.BudgetNote
	}
	return RequestStepOutput{StepID: ns.ID, Status: step.Withdrawn, Behavior: "deny", Message: truncate(msg+")", MaxStepMessage)}, nil
}

// expiredEvents announces the steps a write found expired on read.
func expiredEvents(c StepChange, now time.Time) []event.Event {
	var out []event.Event
	for _, w := range c.Steps {
		if w.Step.Status == step.Expired {
			out = append(out, event.ForStep(event.StepExpired, w.Step, task.System, now))
		}
	}
	return out
}

// answer tells the run what its owner decided about a step it asked before:
// the call a asks is the step's call as asked or, approved as the owner
// edited it, the edited call.
func (s *Service) answer(ctx context.Context, st step.Step, a *asking, change StepChange) (RequestStepOutput, error) {
	out := RequestStepOutput{StepID: st.ID, Status: st.Status, Behavior: "deny"}
	switch st.Status {
	case step.Pending:
		out.Message = msgPending
	case step.Refused:
		out.Message = msgRefused
		if st.Message != "" {
			out.Message = truncate(fmt.Sprintf("refused by your owner: %q; don't try it again: finish without it, or return what you have and say why", st.Message), MaxStepMessage)
		}
	case step.Approved:
		if a.in.ToolUseID == "" {
			out.Message = msgLeftToPL
			if len(st.Edited) > 0 {
				out.UpdatedInput, out.Message = st.Edited, editedMessage(st, a.fp, msgEditedLeftThat, msgEditedLeftThis)
			}
			break
		}
		used := st
		used.Status = step.Consumed
		change.Steps = append(change.Steps, StepWrite{Step: used, Prev: step.Approved})
		out.Status, out.Behavior, out.UpdatedInput, out.Message = step.Consumed, "allow", st.Allowed(), msgAllowed
		if len(st.Edited) > 0 {
			out.Message = editedMessage(st, a.fp, msgEditedThat, msgEditedThis)
		}
	}
	if len(change.Steps) > 0 {
		if err := s.Store.SaveSteps(ctx, change); err != nil {
			if errors.Is(err, ErrConflict) {
				return RequestStepOutput{}, task.Refusef("step %s changed while answering (used or decided at the same moment); call request_step again", st.ID)
			}
			return RequestStepOutput{}, fmt.Errorf("store step %s: %w", st.ID, err)
		}
	}
	return out, nil
}

// editedMessage is the answer to a call of fingerprint fp that an edited
// approval allows: that (the edited call was asked), or this quoting the
// edit (the call as asked was); then the owner's message, if any.
func editedMessage(st step.Step, fp, that, this string) string {
	msg := that
	if fp != st.EditedFingerprint() {
		msg = this + st.ToolName + " " + string(st.Edited)
	}
	if st.Message != "" {
		msg = truncate(msg, 300) + fmt.Sprintf("; your owner says: %q", st.Message)
	}
	return truncate(msg, 500)
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
