package invariants

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/useprickle/prickle/shared/aws/store"
	"github.com/useprickle/prickle/shared/domain/audit"
	"github.com/useprickle/prickle/shared/domain/budget"
	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/domain/wakeup"
)

// Kinds of violation a Report counts.
const (
	// DoubleCount is an effect applied more often than what caused it: a
	// call allowed twice, a grant used or a budget debited more than its
	// steps, a wake-up run twice.
	DoubleCount = "double count"
	// MissingEffect is an effect applied less often than what caused it (a
	// landed change whose answer was lost and not found again).
	MissingEffect = "missing effect"
	// OutOfOrder is a task history that is not a path through the state
	// machine, or that disagrees with the task's version.
	OutOfOrder = "history out of order"
)

// Violation is one broken invariant.
type Violation struct {
	Kind, What string
}

// Report is what Check found: how much it checked, and what was wrong.
type Report struct {
	Tasks, Steps, Allowed, GrantUses, Debits, WakeUps int
	Violations                                        []Violation
}

// Count returns how many violations are of kind.
func (r Report) Count(kind string) int {
	n := 0
	for _, v := range r.Violations {
		if v.Kind == kind {
			n++
		}
	}
	return n
}

func (r *Report) add(kind, format string, args ...any) {
	r.Violations = append(r.Violations, Violation{Kind: kind, What: fmt.Sprintf(format, args...)})
}

// Source is what Check reads: the store, and a client over its tables for
// the scans the store has no method for.
type Source struct {
	Store  *store.Store
	Client *dynamodb.Client
	Tables map[string]string // as local.json names them: TasksTable, …
}

// Check reads every task, step, grant, budget spend, audit entry and wake-up
// attempt of the store and checks that each allowed call was allowed once
// (one step_allowed entry per step a grant or budget allowed, one decision
// per decided step), each grant use counted once (uses = the steps the
// grant allowed), each debit once (a day's spend = the amounts of the steps
// its budget allowed), each wake-up run once (one delivered run per event
// and agent), and each task's history in order.
func Check(ctx context.Context, src Source) (Report, error) {
	var r Report
	keys, err := scanKeys(ctx, src.Client, src.Tables["TasksTable"])
	if err != nil {
		return r, err
	}
	projects := map[string]bool{}
	var steps []step.Step
	for _, id := range keys.tasks {
		t, h, err := src.Store.TaskWithHistory(ctx, id)
		if err != nil {
			return r, err
		}
		r.Tasks++
		projects[t.Project] = true
		checkHistory(&r, t, h)
		ss, err := src.Store.StepsForTask(ctx, id)
		if err != nil {
			return r, err
		}
		steps = append(steps, ss...)
		attempts, err := src.Store.WakeAttempts(ctx, id)
		if err != nil {
			return r, err
		}
		checkWakeUps(&r, id, attempts)
	}
	r.Steps = len(steps)
	for _, p := range keys.projects {
		projects[p] = true
	}
	for _, p := range sortedKeys(projects) {
		if err := checkProject(ctx, &r, src.Store, p, steps, keys.spend[p]); err != nil {
			return r, err
		}
	}
	return r, nil
}

func checkHistory(r *Report, t task.Task, h []task.Event) {
	if err := Replay(t, h); err != nil {
		r.add(OutOfOrder, "task %s: %v", t.ID, err)
	}
	if t.Version != len(h) {
		r.add(OutOfOrder, "task %s: version %d but %d history lines", t.ID, t.Version, len(h))
	}
}

// checkWakeUps: of one task's wake-up attempts, each event woke each agent
// in one run at most, delivered at most once.
func checkWakeUps(r *Report, taskID string, attempts []wakeup.Attempt) {
	runs, delivered := map[string]map[string]bool{}, map[string]int{}
	for _, a := range attempts {
		k := a.EventID + " for " + a.Agent
		if runs[k] == nil {
			runs[k] = map[string]bool{}
			r.WakeUps++
		}
		if a.RunID != "" {
			runs[k][a.RunID] = true
		}
		if a.Delivered() {
			delivered[k]++
		}
	}
	for k, ids := range runs {
		if len(ids) > 1 {
			r.add(DoubleCount, "task %s: event %s started %d runs", taskID, k, len(ids))
		}
		if delivered[k] > 1 {
			r.add(DoubleCount, "task %s: event %s was delivered %d times", taskID, k, delivered[k])
		}
	}
}

// checkProject checks one project's audit entries, grants and spend against the steps.
func checkProject(ctx context.Context, r *Report, st *store.Store, project string, all []step.Step, spend []budget.Spend) error {
	entries, err := st.ProjectAudit(ctx, project)
	if err != nil {
		return err
	}
	perStep := map[string]map[string]int{}
	for _, e := range entries {
		if e.StepID == "" {
			continue
		}
		if perStep[e.StepID] == nil {
			perStep[e.StepID] = map[string]int{}
		}
		perStep[e.StepID][e.Action]++
	}
	budgets, err := st.ProjectBudgets(ctx, project)
	if err != nil {
		return err
	}
	byGrant, debited := map[string]int{}, map[string]budget.Micros{}
	for _, s := range all {
		if s.Project != project {
			continue
		}
		if k, amount, ok := approvedSpend(s, budgets); ok {
			debited[k] += amount
		}
		for action, n := range perStep[s.ID] {
			if n > 1 {
				r.add(DoubleCount, "step %s of task %s: %d %s entries", s.ID, s.TaskID, n, action)
			}
		}
		decided := perStep[s.ID][audit.StepApproved] + perStep[s.ID][audit.StepRefused] + perStep[s.ID][audit.StepAllowed]
		if decided > 1 {
			r.add(DoubleCount, "step %s of task %s: decided %d times", s.ID, s.TaskID, decided)
		}
		if s.AllowedBy == "" {
			continue
		}
		r.Allowed++
		if perStep[s.ID][audit.StepAllowed] == 0 {
			r.add(MissingEffect, "step %s of task %s: allowed by %s but no %s entry", s.ID, s.TaskID, s.AllowedBy, audit.StepAllowed)
		}
		if g, ok := strings.CutPrefix(s.AllowedBy, "grant "); ok {
			byGrant[g]++
		}
		if unit, ok := strings.CutPrefix(s.AllowedBy, "budget "); ok && s.Amount != nil && s.DecidedAt != nil {
			amount, _ := budget.FromUnits(s.Amount.Value)
			debited[spendKey(project, ownerOf(s.Agent), unit, s.Agent, budget.Day(*s.DecidedAt))] += amount
		}
	}
	grants, err := st.ProjectGrants(ctx, project)
	if err != nil {
		return err
	}
	for _, g := range grants {
		r.GrantUses += g.Uses
		checkCount(r, fmt.Sprintf("grant %s of %s: uses", g.ID, project), g.Uses, byGrant[g.ID])
	}
	for _, sp := range spend {
		k := spendKey(sp.Project, sp.Owner, sp.Unit, sp.Agent, sp.Day)
		r.Debits++
		checkCount(r, "spend "+k, int(sp.Spent), int(debited[k]))
		delete(debited, k)
	}
	for k, v := range debited {
		if v > 0 {
			r.add(MissingEffect, "spend %s: steps allowed %d micros, no spend stored", k, v)
		}
	}
	return nil
}

// approvedSpend is what an owner's approval of a spending step added to its
// agent's spend (team's approvedSpend): the declared amount, or what the
// input holds where the budget reads amounts if more, when the owner has a
// budget in its unit (set before the approval, as the suites set theirs).
func approvedSpend(s step.Step, budgets []budget.Budget) (string, budget.Micros, bool) {
	if s.Kind != "spending" || s.Amount == nil || s.AllowedBy != "" || s.DecidedAt == nil ||
		(s.Status != step.Approved && s.Status != step.Consumed && s.Status != step.Expired) {
		return "", 0, false
	}
	owner := ownerOf(s.Agent)
	for _, b := range budgets {
		if b.Owner != owner || b.Unit != s.Amount.Unit {
			continue
		}
		amount, _ := budget.FromUnits(s.Amount.Value)
		if read, why := b.AmountOf(s.ToolName, s.Input); why == "" && read > amount {
			amount = read
		}
		return spendKey(s.Project, owner, b.Unit, s.Agent, budget.Day(*s.DecidedAt)), amount, amount > 0
	}
	return "", 0, false
}

// checkCount compares a stored count with what the steps say it must be.
func checkCount(r *Report, what string, stored, want int) {
	switch {
	case stored > want:
		r.add(DoubleCount, "%s %d, the steps say %d", what, stored, want)
	case stored < want:
		r.add(MissingEffect, "%s %d, the steps say %d", what, stored, want)
	}
}

func spendKey(project, owner, unit, agent, day string) string {
	return project + "/" + owner + "/" + unit + "/" + agent + "/" + day
}

// ownerOf is the owner an agent speaks for: the part of owner/agent before the slash.
func ownerOf(agent string) string {
	owner, _, _ := strings.Cut(agent, "/")
	return owner
}

// keys are what one scan of the tasks table finds: the tasks, the projects
// with grants, spend or an audit trail, and each project's spend records.
type keys struct {
	tasks, projects []string
	spend           map[string][]budget.Spend
}

func scanKeys(ctx context.Context, client *dynamodb.Client, table string) (keys, error) {
	k := keys{spend: map[string][]budget.Spend{}}
	seen := map[string]bool{}
	in := &dynamodb.ScanInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true)}
	for p := dynamodb.NewScanPaginator(client, in); p.HasMorePages(); {
		page, err := p.NextPage(ctx)
		if err != nil {
			return k, fmt.Errorf("scan %s: %w", table, err)
		}
		for _, item := range page.Items {
			var rec struct {
				PK      string `dynamodbav:"pk"`
				SK      string `dynamodbav:"sk"`
				Project string `dynamodbav:"spend_project"`
				Owner   string `dynamodbav:"owner"`
				Unit    string `dynamodbav:"unit"`
				Agent   string `dynamodbav:"agent"`
				Day     string `dynamodbav:"day"`
				Spent   int64  `dynamodbav:"spent"`
			}
			if err := attributevalue.UnmarshalMap(item, &rec); err != nil {
				return k, fmt.Errorf("scan %s: %w", table, err)
			}
			prefix, rest, _ := strings.Cut(rec.PK, "#")
			switch prefix {
			case "TASK":
				if rec.SK == "TASK" {
					k.tasks = append(k.tasks, rest)
				}
			case "SPEND":
				k.spend[rest] = append(k.spend[rest], budget.Spend{Project: rec.Project, Owner: rec.Owner, Unit: rec.Unit, Agent: rec.Agent, Day: rec.Day, Spent: budget.Micros(rec.Spent)})
				fallthrough
			case "AUDIT", "GRANTS":
				if !seen[rest] {
					seen[rest] = true
					k.projects = append(k.projects, rest)
				}
			}
		}
	}
	sort.Strings(k.tasks)
	return k, nil
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
