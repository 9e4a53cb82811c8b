package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/useprickle/prickle/shared/domain/budget"
	"github.com/useprickle/prickle/shared/team"
)

// Budgets and spend live in the tasks table:
//
//	budget pk BUDGETS#<project>  sk <owner>#<unit>               amount_field, amount_tool (absent before they existed)
//	spend  pk SPEND#<project>    sk <day>#<owner>#<unit>#<owner/agent>   spent (micros), once_* (AddSpend's own ids), ttl
//
// A spend item is one agent's day in one unit, only ever changed by an ADD:
// a debit without asking is conditioned on the total staying within the
// limit, so racing debits never overspend; an owner's approval adds its
// amount with no limit, in the decision's transaction (SaveSteps). Spend
// items expire SpendRetention after their day.
const SpendRetention = 40 * 24 * time.Hour

func budgetsPK(project string) string { return "BUDGETS#" + project }
func spendPK(project string) string   { return "SPEND#" + project }

func spendSK(k budget.Spend) string {
	return k.Day + "#" + k.Owner + "#" + k.Unit + "#" + k.Agent
}

type budgetRecord struct {
	PK        string `dynamodbav:"pk"`
	SK        string `dynamodbav:"sk"`
	Type      string `dynamodbav:"type"`
	Proj      string `dynamodbav:"budget_project"`
	Owner     string `dynamodbav:"owner"`
	Unit      string `dynamodbav:"unit"`
	Limit     int64  `dynamodbav:"per_agent_per_day"`
	AutoAllow bool   `dynamodbav:"auto_allow"`
	// AmountField and AmountTool are absent from budgets stored before them.
	AmountField string    `dynamodbav:"amount_field,omitempty"`
	AmountTool  string    `dynamodbav:"amount_tool,omitempty"`
	SetBy       string    `dynamodbav:"set_by"`
	SetAt       time.Time `dynamodbav:"set_at"`
}

func (r budgetRecord) budget() budget.Budget {
	return budget.Budget{Project: r.Proj, Owner: r.Owner, Unit: r.Unit, PerAgentPerDay: budget.Micros(r.Limit), AutoAllow: r.AutoAllow,
		AmountField: r.AmountField, AmountTool: r.AmountTool, SetBy: r.SetBy, SetAt: r.SetAt}
}

type spendRecord struct {
	PK    string `dynamodbav:"pk"`
	SK    string `dynamodbav:"sk"`
	Proj  string `dynamodbav:"spend_project"`
	Owner string `dynamodbav:"owner"`
	Unit  string `dynamodbav:"unit"`
	Agent string `dynamodbav:"agent"`
	Day   string `dynamodbav:"day"`
	Spent int64  `dynamodbav:"spent"`
}

func (r spendRecord) spend() budget.Spend {
	return budget.Spend{Project: r.Proj, Owner: r.Owner, Unit: r.Unit, Agent: r.Agent, Day: r.Day, Spent: budget.Micros(r.Spent)}
}

// PutBudget creates or replaces an owner's budget in a project for a unit.
func (s *Store) PutBudget(ctx context.Context, b budget.Budget) error {
	item, err := marshalItem(budgetRecord{
		PK: budgetsPK(b.Project), SK: b.Owner + "#" + b.Unit, Type: "budget", Proj: b.Project, Owner: b.Owner, Unit: b.Unit,
		Limit: int64(b.PerAgentPerDay), AutoAllow: b.AutoAllow, AmountField: b.AmountField, AmountTool: b.AmountTool, SetBy: b.SetBy, SetAt: b.SetAt.UTC(),
	})
	if err != nil {
		return fmt.Errorf("put budget: %w", err)
	}
	if _, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.tables.Tasks), Item: item}); err != nil {
		return fmt.Errorf("put budget of %s in %s: %w", b.Owner, b.Project, err)
	}
	return nil
}

// Budget reads one owner's budget in a project for a unit.
func (s *Store) Budget(ctx context.Context, project, owner, unit string) (budget.Budget, error) {
	key := map[string]types.AttributeValue{"pk": stringValue(budgetsPK(project)), "sk": stringValue(owner + "#" + unit)}
	var r budgetRecord
	if err := s.getRecord(ctx, s.tables.Tasks, key, fmt.Sprintf("budget of %s in %s for %s", owner, project, unit), &r); err != nil {
		return budget.Budget{}, err
	}
	return r.budget(), nil
}

// ProjectBudgets lists every owner's budgets in a project.
func (s *Store) ProjectBudgets(ctx context.Context, project string) ([]budget.Budget, error) {
	out, err := queryAll(ctx, s.db, partitionQuery(s.tables.Tasks, budgetsPK(project)), budgetRecord.budget)
	if err != nil {
		return nil, fmt.Errorf("budgets of %s: %w", project, err)
	}
	return out, nil
}

// spendUpdate is the update that adds amount to one agent's spend of a day,
// creating the item (with its TTL) if it is the day's first spend. With
// once, it also adds that update's own id (its condition is the caller's).
func (s *Store) spendUpdate(key budget.Spend, amount budget.Micros, once *onceWrite) (*types.Update, error) {
	day, err := time.Parse("2006-01-02", key.Day)
	if err != nil {
		return nil, fmt.Errorf("add spend: day %q: %w", key.Day, err)
	}
	update := "ADD #spent :amount SET spend_project = :p, #owner = :o, #unit = :u, #agent = :a, #day = :d, #ttl = :ttl"
	names := map[string]string{"#spent": "spent", "#owner": "owner", "#unit": "unit", "#agent": "agent", "#day": "day", "#ttl": "ttl"}
	values := map[string]types.AttributeValue{
		":amount": numberValue(int64(amount)), ":p": stringValue(key.Project), ":o": stringValue(key.Owner),
		":u": stringValue(key.Unit), ":a": stringValue(key.Agent), ":d": stringValue(key.Day),
		":ttl": numberValue(day.Add(SpendRetention).Unix()),
	}
	if once != nil {
		update = "ADD #spent :amount, " + onceAdd + " SET spend_project = :p, #owner = :o, #unit = :u, #agent = :a, #day = :d, #ttl = :ttl " + onceRemove
		names, values = once.names(names), once.values(values)
	}
	return &types.Update{
		TableName:                 aws.String(s.tables.Tasks),
		Key:                       map[string]types.AttributeValue{"pk": stringValue(spendPK(key.Project)), "sk": stringValue(spendSK(key))},
		UpdateExpression:          aws.String(update),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	}, nil
}

// AddSpend adds amount to one agent's spend of a day in one update. With a
// limit, the update is conditioned on the total staying within it: the
// stored spend (none counts as 0) must be at most limit - amount, so of
// racing debits exactly those that fit land, and a lost one writes nothing.
// Each debit and give-back carries its own id (onceWrite): the SDK's retry
// of one whose answer was lost adds nothing more and answers the total
// stored (a debit that landed at the limit is not read as over it).
func (s *Store) AddSpend(ctx context.Context, key budget.Spend, amount budget.Micros, limit *budget.Micros) (budget.Micros, error) {
	once, err := newOnceWrite(time.Now())
	if err != nil {
		return 0, fmt.Errorf("add spend of %s: %w", key.Agent, err)
	}
	u, err := s.spendUpdate(key, amount, &once)
	if err != nil {
		return 0, err
	}
	in := &dynamodb.UpdateItemInput{
		TableName: u.TableName, Key: u.Key, UpdateExpression: u.UpdateExpression,
		ConditionExpression:      aws.String(onceCondition),
		ExpressionAttributeNames: u.ExpressionAttributeNames, ExpressionAttributeValues: u.ExpressionAttributeValues,
		// The whole item: an ADD of 0 changes nothing, and UPDATED_NEW then
		// need not return the total (the emulator does not).
		ReturnValues:                        types.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
	if limit != nil && amount > 0 { // a debit of nothing never crosses the limit, even one hand-approved spend already passed
		room := *limit - amount
		if room < 0 {
			return 0, fmt.Errorf("debit %s %s beyond a limit of %s: %w", amount, key.Unit, *limit, team.ErrConflict)
		}
		in.ConditionExpression = aws.String("(attribute_not_exists(#spent) OR #spent <= :room) AND " + onceCondition)
		in.ExpressionAttributeValues[":room"] = numberValue(int64(room))
	}
	out, err := s.db.UpdateItem(ctx, in)
	var item map[string]types.AttributeValue
	switch stored, landed := once.landed(err); {
	case landed:
		item = stored
	case err != nil:
		return 0, writeError(fmt.Sprintf("add %s %s to the spend of %s", amount, key.Unit, key.Agent), err)
	default:
		item = out.Attributes
	}
	n, ok := item["spent"].(*types.AttributeValueMemberN)
	if !ok {
		return 0, fmt.Errorf("add spend of %s: no total came back", key.Agent)
	}
	total, err := strconv.ParseInt(n.Value, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("add spend of %s: total %q: %w", key.Agent, n.Value, err)
	}
	return budget.Micros(total), nil
}

// Spent reads what one agent spent on a day in a unit; nothing stored is 0.
func (s *Store) Spent(ctx context.Context, key budget.Spend) (budget.Micros, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(s.tables.Tasks),
		Key:            map[string]types.AttributeValue{"pk": stringValue(spendPK(key.Project)), "sk": stringValue(spendSK(key))},
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return 0, fmt.Errorf("get spend of %s: %w", key.Agent, err)
	}
	if out.Item == nil {
		return 0, nil
	}
	var r spendRecord
	if err := unmarshalItem(out.Item, &r); err != nil {
		return 0, fmt.Errorf("spend of %s: %w", key.Agent, err)
	}
	return budget.Micros(r.Spent), nil
}

// ProjectSpend lists every agent's spend in a project on one day.
func (s *Store) ProjectSpend(ctx context.Context, project, day string) ([]budget.Spend, error) {
	in := &dynamodb.QueryInput{
		TableName:              aws.String(s.tables.Tasks),
		KeyConditionExpression: aws.String("pk = :pk AND begins_with(sk, :day)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": stringValue(spendPK(project)), ":day": stringValue(day + "#"),
		},
		ConsistentRead: aws.Bool(true),
	}
	out, err := queryAll(ctx, s.db, in, spendRecord.spend)
	if err != nil {
		return nil, fmt.Errorf("spend in %s on %s: %w", project, day, err)
	}
	return out, nil
}

var _ team.Budgets = (*Store)(nil)
