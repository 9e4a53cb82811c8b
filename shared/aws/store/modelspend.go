package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/useprickle/prickle/shared/domain/budget"
	"github.com/useprickle/prickle/shared/domain/modelspend"
)

// Model spend lives in the tasks table:
//
//	run   pk RUNSPEND#<task>        sk <run id>        one run's report (no ttl: it is part of the task's record)
//	cap   pk MODELSPEND#<agent>     sk CAP             the owner's daily cap
//	day   pk MODELSPEND#<agent>     sk DAY#<day>       the day's totals (ADD only), asked_at, the decision; ttl
//	month pk MODELSPEND#<agent>     sk MONTH#<month>   the month's totals (ADD only); ttl
//
// A run is stored once, in one transaction with the ADDs to its agent's day
// and month and its audit entry, conditioned on the run being new: a report
// sent twice (a retry) counts once. None of these items carries an index
// attribute, so the task indexes stay as they are.
func runSpendPK(taskID string) string  { return "RUNSPEND#" + taskID }
func modelSpendPK(agent string) string { return "MODELSPEND#" + agent }

const modelCapSK = "CAP"

func daySK(day string) string     { return "DAY#" + day }
func monthSK(month string) string { return "MONTH#" + month }

// runSpendRecord is one run's reported use; alike budgetRecord in shape only.
type runSpendRecord struct {
	PK           string    `dynamodbav:"pk"`
	SK           string    `dynamodbav:"sk"`
	Type         string    `dynamodbav:"type"`
	Agent        string    `dynamodbav:"agent"`
	Proj         string    `dynamodbav:"run_project"`
	TaskID       string    `dynamodbav:"task_id"`
	RunID        string    `dynamodbav:"run_id"`
	Cost         int64     `dynamodbav:"cost"`
	InputTokens  int64     `dynamodbav:"input_tokens"`
	OutputTokens int64     `dynamodbav:"output_tokens"`
	Turns        int64     `dynamodbav:"turns"`
	DurationMS   int64     `dynamodbav:"duration_ms"`
	Model        string    `dynamodbav:"model,omitempty"`
	At           time.Time `dynamodbav:"at"`
}

func (r runSpendRecord) run() modelspend.Run {
	return modelspend.Run{Agent: r.Agent, Project: r.Proj, TaskID: r.TaskID, RunID: r.RunID, Cost: budget.Micros(r.Cost), At: r.At,
		Report: modelspend.Report{CostUSD: float64(r.Cost) / budget.Scale, InputTokens: r.InputTokens, OutputTokens: r.OutputTokens,
			Turns: r.Turns, DurationMS: r.DurationMS, Model: r.Model}}
}

// periodRecord is a day or a month of an agent; the day also carries the ask and the decision.
type periodRecord struct {
	SK           string     `dynamodbav:"sk"`
	Period       string     `dynamodbav:"period"`
	Cost         int64      `dynamodbav:"cost"`
	InputTokens  int64      `dynamodbav:"input_tokens"`
	OutputTokens int64      `dynamodbav:"output_tokens"`
	Runs         int64      `dynamodbav:"runs"`
	AskedAt      *time.Time `dynamodbav:"asked_at"`
	RaisedTo     int64      `dynamodbav:"raised_to"`
	Decision     string     `dynamodbav:"decision"`
	DecidedBy    string     `dynamodbav:"decided_by"`
	DecidedAt    *time.Time `dynamodbav:"decided_at"`
}

func (r periodRecord) totals() modelspend.Totals {
	return modelspend.Totals{Cost: budget.Micros(r.Cost), InputTokens: r.InputTokens, OutputTokens: r.OutputTokens, Runs: r.Runs}
}

type capRecord struct {
	PK     string    `dynamodbav:"pk"`
	SK     string    `dynamodbav:"sk"`
	Type   string    `dynamodbav:"type"`
	Agent  string    `dynamodbav:"agent"`
	PerDay int64     `dynamodbav:"per_day"`
	SetBy  string    `dynamodbav:"set_by"`
	SetAt  time.Time `dynamodbav:"set_at"`
}

func modelSpendKey(agent, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": stringValue(modelSpendPK(agent)), "sk": stringValue(sk)}
}

// names are expression attribute names, "#name" for name, or "#alias" for
// "alias:name": attribute names such as agent and period are reserved words.
func names(specs ...string) map[string]string {
	out := make(map[string]string, len(specs))
	for _, spec := range specs {
		alias, name, ok := strings.Cut(spec, ":")
		if !ok {
			name = alias
		}
		out["#"+alias] = name
	}
	return out
}

// dayTTL and monthTTL are when a day's or a month's counters expire.
func dayTTL(day string) (int64, error) {
	t, err := time.Parse("2006-01-02", day)
	if err != nil {
		return 0, fmt.Errorf("day %q: %w", day, err)
	}
	return t.Add(modelspend.DayRetention).Unix(), nil
}

func monthTTL(month string) (int64, error) {
	t, err := time.Parse("2006-01", month)
	if err != nil {
		return 0, fmt.Errorf("month %q: %w", month, err)
	}
	return t.Add(modelspend.MonthRetention).Unix(), nil
}

// addTotals is the update that adds a run to one of its agent's periods.
func (s *Store) addTotals(r modelspend.Run, sk, period string, ttl int64) *types.Update {
	return &types.Update{
		TableName:                aws.String(s.tables.Tasks),
		Key:                      modelSpendKey(r.Agent, sk),
		UpdateExpression:         aws.String("ADD #cost :c, #in :i, #out :o, #runs :one SET #agent = :a, #period = :p, #ttl = :ttl"),
		ExpressionAttributeNames: names("cost", "in:input_tokens", "out:output_tokens", "runs", "agent", "period", "ttl"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":c": numberValue(int64(r.Cost)), ":i": numberValue(r.InputTokens), ":o": numberValue(r.OutputTokens), ":one": numberValue(1),
			":a": stringValue(r.Agent), ":p": stringValue(period), ":ttl": numberValue(ttl),
		},
	}
}

// RecordRun stores a run's spend once: the run, the ADDs to its agent's day
// and month, and its audit entry, in one transaction conditioned on the run
// being new. A run reported before changes nothing and recorded is false;
// the SDK's retry of this very report after a lost answer is recorded (its
// client request token, and the run's write_id, as in SaveSteps), not read
// as reported before.
func (s *Store) RecordRun(ctx context.Context, r modelspend.Run) (recorded bool, err error) {
	day, month := modelspend.Day(r.At), modelspend.Month(r.At)
	dttl, err := dayTTL(day)
	if err != nil {
		return false, err
	}
	mttl, err := monthTTL(month)
	if err != nil {
		return false, err
	}
	item, err := marshalItem(runSpendRecord{PK: runSpendPK(r.TaskID), SK: r.RunID, Type: "run_spend", Agent: r.Agent, Proj: r.Project, TaskID: r.TaskID, RunID: r.RunID,
		Cost: int64(r.Cost), InputTokens: r.InputTokens, OutputTokens: r.OutputTokens, Turns: r.Turns, DurationMS: r.DurationMS, Model: r.Model, At: r.At.UTC()})
	if err != nil {
		return false, fmt.Errorf("record run %s: %w", r.RunID, err)
	}
	entry, err := s.auditPut(r.AuditEntry())
	if err != nil {
		return false, fmt.Errorf("record run %s: %w", r.RunID, err)
	}
	write, err := newWriteID()
	if err != nil {
		return false, fmt.Errorf("record run %s: %w", r.RunID, err)
	}
	item[writeIDAttr] = stringValue(write)
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: aws.String(s.tables.Tasks), Item: item, ConditionExpression: aws.String("attribute_not_exists(pk)"),
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}},
		{Update: s.addTotals(r, daySK(day), day, dttl)},
		{Update: s.addTotals(r, monthSK(month), month, mttl)},
		{Put: entry},
	}})
	if landedTransaction(err, write) {
		return true, nil
	}
	if i, lost := failedCondition(err); lost && i == 0 {
		return false, nil
	}
	if err != nil {
		return false, writeError("record run "+r.RunID, err)
	}
	return true, nil
}

// TaskRuns lists the runs of a task that reported their spend, oldest first.
func (s *Store) TaskRuns(ctx context.Context, taskID string) ([]modelspend.Run, error) {
	runs, err := queryAll(ctx, s.db, partitionQuery(s.tables.Tasks, runSpendPK(taskID)), runSpendRecord.run)
	if err != nil {
		return nil, fmt.Errorf("runs of %s: %w", taskID, err)
	}
	slices.SortStableFunc(runs, func(a, b modelspend.Run) int { return a.At.Compare(b.At) })
	return runs, nil
}

// AgentsSpend reads each agent's cap, day and month in batched reads
// (strongly consistent), in the order of agents; nothing stored reads as
// no cap and zero totals.
func (s *Store) AgentsSpend(ctx context.Context, agents []string, day, month string) ([]modelspend.AgentSpend, error) {
	keys := make([]map[string]types.AttributeValue, 0, 3*len(agents))
	for _, a := range agents {
		keys = append(keys, modelSpendKey(a, modelCapSK), modelSpendKey(a, daySK(day)), modelSpendKey(a, monthSK(month)))
	}
	items, err := s.batchGet(ctx, s.tables.Tasks, keys)
	if err != nil {
		return nil, fmt.Errorf("model spend of %d agents: %w", len(agents), err)
	}
	byAgent := map[string]*modelspend.AgentSpend{}
	out := make([]modelspend.AgentSpend, len(agents))
	for i, a := range agents {
		out[i] = modelspend.AgentSpend{Agent: a, Today: modelspend.DayState{Agent: a, Day: day}}
		byAgent[modelSpendPK(a)] = &out[i]
	}
	for _, item := range items {
		pk, _ := item["pk"].(*types.AttributeValueMemberS)
		if pk == nil || byAgent[pk.Value] == nil {
			continue
		}
		a := byAgent[pk.Value]
		var p periodRecord
		if err := unmarshalItem(item, &p); err != nil {
			return nil, fmt.Errorf("model spend of %s: %w", a.Agent, err)
		}
		switch p.SK {
		case modelCapSK:
			var c capRecord
			if err := unmarshalItem(item, &c); err != nil {
				return nil, fmt.Errorf("model cap of %s: %w", a.Agent, err)
			}
			if c.PerDay > 0 {
				a.Cap = &modelspend.Cap{Agent: c.Agent, PerDay: budget.Micros(c.PerDay), SetBy: c.SetBy, SetAt: c.SetAt}
			}
		case daySK(day):
			a.Today = modelspend.DayState{Agent: a.Agent, Day: day, Totals: p.totals(), AskedAt: utcPtr(p.AskedAt),
				RaisedTo: budget.Micros(p.RaisedTo), Decision: p.Decision, DecidedBy: p.DecidedBy, DecidedAt: utcPtr(p.DecidedAt)}
		case monthSK(month):
			a.Month = p.totals()
		}
	}
	return out, nil
}

// PutModelCap stores an agent's daily cap, replacing any; a cap of 0 is
// none (kept as a put, so removing a cap needs no delete right).
func (s *Store) PutModelCap(ctx context.Context, c modelspend.Cap) error {
	item, err := marshalItem(capRecord{PK: modelSpendPK(c.Agent), SK: modelCapSK, Type: "model_cap", Agent: c.Agent,
		PerDay: int64(c.PerDay), SetBy: c.SetBy, SetAt: c.SetAt.UTC()})
	if err != nil {
		return fmt.Errorf("put model cap of %s: %w", c.Agent, err)
	}
	if _, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.tables.Tasks), Item: item}); err != nil {
		return fmt.Errorf("put model cap of %s: %w", c.Agent, err)
	}
	return nil
}

// MarkCapAsked records, once per agent per day, that the owner is being
// asked about the cap: false (and nothing written) when they were already.
// The mark carries its own id (write_id), so the SDK's retry of a mark whose
// answer was lost is still the first.
func (s *Store) MarkCapAsked(ctx context.Context, agent, day string, at time.Time) (bool, error) {
	ttl, err := dayTTL(day)
	if err != nil {
		return false, err
	}
	id, err := newWriteID()
	if err != nil {
		return false, fmt.Errorf("mark the cap of %s asked on %s: %w", agent, day, err)
	}
	_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                aws.String(s.tables.Tasks),
		Key:                      modelSpendKey(agent, daySK(day)),
		UpdateExpression:         aws.String("SET #asked = :at, #write = :id, #agent = :a, #period = :d, #ttl = :ttl"),
		ConditionExpression:      aws.String("attribute_not_exists(#asked) OR #write = :id"),
		ExpressionAttributeNames: names("asked:asked_at", "write:write_id", "agent", "period", "ttl"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":at": stringValue(at.UTC().Format(time.RFC3339Nano)), ":id": stringValue(id), ":a": stringValue(agent), ":d": stringValue(day), ":ttl": numberValue(ttl),
		},
	})
	if _, lost := failedCondition(err); lost {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("mark the cap of %s asked on %s: %w", agent, day, err)
	}
	return true, nil
}

// UnmarkCapAsked takes back a mark whose message could not be handed on,
// if it is still the one made at at, so the next check asks again.
func (s *Store) UnmarkCapAsked(ctx context.Context, agent, day string, at time.Time) error {
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.tables.Tasks),
		Key:                       modelSpendKey(agent, daySK(day)),
		UpdateExpression:          aws.String("REMOVE #asked"),
		ConditionExpression:       aws.String("#asked = :at AND attribute_not_exists(#decision)"),
		ExpressionAttributeNames:  names("asked:asked_at", "decision"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":at": stringValue(at.UTC().Format(time.RFC3339Nano))},
	})
	if _, lost := failedCondition(err); lost {
		return nil
	}
	if err != nil {
		return fmt.Errorf("unmark the cap of %s asked on %s: %w", agent, day, err)
	}
	return nil
}

// DecideCap records the owner's decision on the day's cap, once: raised
// sets the day's cap to raisedTo. A day already decided is team.ErrConflict;
// the SDK's retry of this decision after a lost answer is not (decision_id).
func (s *Store) DecideCap(ctx context.Context, agent, day, decision, by string, at time.Time, raisedTo budget.Micros) error {
	ttl, err := dayTTL(day)
	if err != nil {
		return err
	}
	id, err := newWriteID()
	if err != nil {
		return fmt.Errorf("decide the cap of %s on %s: %w", agent, day, err)
	}
	_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                aws.String(s.tables.Tasks),
		Key:                      modelSpendKey(agent, daySK(day)),
		UpdateExpression:         aws.String("SET #decision = :d, #did = :id, #by = :by, #at = :at, #raised = :r, #agent = :a, #period = :p, #ttl = :ttl"),
		ConditionExpression:      aws.String("attribute_not_exists(#decision) OR #did = :id"),
		ExpressionAttributeNames: names("decision", "did:decision_id", "by:decided_by", "at:decided_at", "raised:raised_to", "agent", "period", "ttl"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":d": stringValue(decision), ":id": stringValue(id), ":by": stringValue(by), ":at": stringValue(at.UTC().Format(time.RFC3339Nano)),
			":r": numberValue(int64(raisedTo)), ":a": stringValue(agent), ":p": stringValue(day), ":ttl": numberValue(ttl),
		},
	})
	if err != nil {
		return writeError(fmt.Sprintf("decide the cap of %s on %s", agent, day), err)
	}
	return nil
}
