package team

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/useprickle/prickle/shared/domain/budget"
	"github.com/useprickle/prickle/shared/domain/grant"
	"github.com/useprickle/prickle/shared/domain/step"
)

// What request_step says when a grant or a budget allowed the call without asking.
const (
	msgGrantAllowed  = "allowed by your owner's standing grant %s: make exactly that call, once, now"
	msgBudgetAllowed = "allowed within your owner's budget (%s): make exactly that call, once, now"
	msgAllowedLeft   = "allowed by your owner's %s, left for your permission layer: make exactly that call now"
)

// allowance is what allows a new step without asking: a grant or a budget
// (by), the owner it speaks for, and, for a budget, what is left (note).
// A budget that did not cover the step leaves by empty and note saying why.
type allowance struct {
	by, owner, note string
	grant           string
	// refund gives a budget's debit back if the step is not stored allowed.
	refund func(context.Context)
}

// allowance checks the owner's live grants first, then, for a spending
// step with an amount, the owner's budget in its unit. A grant's use and a
// budget's debit are conditional writes: of racing calls, only those within
// the grant's life and the budget's limit are allowed.
func (s *Service) allowance(ctx context.Context, call grant.Call, ns step.Step, now time.Time) (allowance, error) {
	grants, err := s.Store.ProjectGrants(ctx, call.Project)
	if err != nil {
		return allowance{}, fmt.Errorf("read grants of project %s: %w", call.Project, err)
	}
	for _, g := range grants {
		if !g.Allows(call, now) {
			continue
		}
		err := s.Store.UseGrant(ctx, g.Project, g.ID, now)
		if errors.Is(err, ErrConflict) || errors.Is(err, ErrNotFound) {
			continue // revoked or expired this very moment
		}
		if err != nil {
			return allowance{}, fmt.Errorf("use grant %s: %w", g.ID, err)
		}
		return allowance{by: "grant " + g.ID, owner: g.Owner, grant: g.ID}, nil
	}
	if ns.Kind != "spending" || ns.Amount == nil {
		return allowance{}, nil
	}
	owner := ownerOf(ns.Agent)
	b, err := s.Store.Budget(ctx, call.Project, owner, ns.Amount.Unit)
	if errors.Is(err, ErrNotFound) {
		return allowance{}, nil
	}
	if err != nil {
		return allowance{}, fmt.Errorf("read budget of %s in %s: %w", owner, call.Project, err)
	}
	key := budget.Spend{Project: call.Project, Owner: owner, Unit: b.Unit, Agent: ns.Agent, Day: budget.Day(now)}
	amount, ok := budget.FromUnits(ns.Amount.Value)
	why := ""
	if ok && b.AutoAllow {
		why = b.Checked(call.ToolName, call.Canonical, amount)
	}
	if ok && b.AutoAllow && why == "" {
		after, err := s.Store.AddSpend(ctx, key, amount, &b.PerAgentPerDay)
		switch {
		case err == nil:
			return allowance{by: "budget " + b.Unit, owner: owner, note: b.Note(ns.Agent, after), refund: func(ctx context.Context) {
				if _, err := s.Store.AddSpend(ctx, key, -amount, nil); err != nil {
					slog.ErrorContext(ctx, "give back budget debit failed", "project", key.Project, "agent", key.Agent, "error", err.Error())
				}
			}}, nil
		case !errors.Is(err, ErrConflict):
			return allowance{}, fmt.Errorf("debit budget of %s: %w", owner, err)
		}
	}
	spent, err := s.Store.Spent(ctx, key)
	if err != nil {
		return allowance{}, fmt.Errorf("read spend of %s: %w", ns.Agent, err)
	}
	note := b.Note(ns.Agent, spent)
	switch {
	case why != "":
		note = fmt.Sprintf("not allowed by the budget: %s; %s", why, note)
	case b.AutoAllow && ok:
		note = fmt.Sprintf("over budget: %s asks %s %s, %s", ns.Agent, amount, b.Unit, note)
	}
	return allowance{note: note}, nil
}

// allowAtOnce stores a step a grant or budget allowed: consumed when the
// client's permission layer asks (tool_use_id), else approved for the
// 15-minute use window. The task does not wait and nobody is notified; the
// audit entry of the step write says which grant or budget allowed it.
// ErrConflict: a racing write landed first (RequestStep reads again).
func (s *Service) allowAtOnce(ctx context.Context, ns step.Step, al allowance, toolUseID string, change StepChange, now time.Time) (RequestStepOutput, error) {
	ns.AllowedBy, ns.DecidedBy, ns.DecidedAt, ns.BudgetNote = al.by, al.owner, &now, al.note
	ns.Status, ns.ExpiresAt = step.Approved, now.Add(step.UseWindow)
	out := RequestStepOutput{StepID: ns.ID, Status: step.Approved, Behavior: "deny", Message: fmt.Sprintf(msgAllowedLeft, al.by)}
	if toolUseID != "" {
		ns.Status = step.Consumed
		msg := fmt.Sprintf(msgGrantAllowed, al.grant)
		if al.grant == "" {
			msg = fmt.Sprintf(msgBudgetAllowed, al.note)
		}
		out = RequestStepOutput{StepID: ns.ID, Status: step.Consumed, Behavior: "allow", UpdatedInput: ns.Input, Message: truncate(msg, MaxStepMessage)}
	}
	change.Steps = append(change.Steps, StepWrite{Step: ns})
	change.At = now
	if err := s.Store.SaveSteps(ctx, change); err != nil {
		return RequestStepOutput{}, fmt.Errorf("store allowed step: %w", err)
	}
	s.publish(ctx, expiredEvents(change, now)...)
	return out, nil
}

// approvedSpend is what an owner's approval of a spending step adds to the
// agent's spend of the day, in the budget of the step's unit: the declared
// amount, or what the input holds where the budget reads amounts if that is
// more. Nil when there is nothing to count (not spending, no such budget).
// It is stored with the decision, so it counts once, when the owner says yes.
func (s *Service) approvedSpend(ctx context.Context, st step.Step, now time.Time) (*budget.Spend, error) {
	if st.Kind != "spending" || st.Amount == nil {
		return nil, nil
	}
	owner := ownerOf(st.Agent)
	b, err := s.Store.Budget(ctx, st.Project, owner, st.Amount.Unit)
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read budget of %s in %s: %w", owner, st.Project, err)
	}
	amount, _ := budget.FromUnits(st.Amount.Value)
	if read, why := b.AmountOf(st.ToolName, st.Input); why == "" && read > amount {
		amount = read
	}
	if amount == 0 {
		return nil, nil
	}
	return &budget.Spend{Project: st.Project, Owner: owner, Unit: b.Unit, Agent: st.Agent, Day: budget.Day(now), Spent: amount}, nil
}
