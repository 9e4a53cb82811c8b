package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/useprickle/prickle/shared/team"
)

// Directory items (the directory table also holds tokens, see tokens.go):
//
//	project    PROJECT#<slug>       META
//	membership PROJECT#<slug>       MEMBER#<owner/agent>   (lists a project's agents)
//	owner      OWNER#<name>         META
//	owned      OWNER#<name>         IN#<slug>#<owner/agent> (the projects an owner may see)
//	agent      AGENT#<owner/agent>  META
//
// None carries agent_id with created_at, so the by_agent index holds tokens only.
const (
	metaSK       = "META"
	memberPrefix = "MEMBER#"
	// ownedPrefix starts the sort key of an owner's view of a membership:
	// OWNER#<owner> / IN#<project>#<owner/agent>, so the projects an owner
	// may see are one Query of its own partition.
	ownedPrefix = "IN#"
)

func projectPK(slug string) string { return "PROJECT#" + slug }
func ownerPK(name string) string   { return "OWNER#" + name }
func agentPK(id string) string     { return "AGENT#" + id }

func ownedSK(project, agent string) string { return ownedPrefix + project + "#" + agent }

func directoryKey(pk, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": stringValue(pk), "sk": stringValue(sk)}
}

type projectRecord struct {
	PK                  string   `dynamodbav:"pk"`
	SK                  string   `dynamodbav:"sk"`
	Type                string   `dynamodbav:"type"`
	Slug                string   `dynamodbav:"slug"`
	Name                string   `dynamodbav:"name"`
	OwnerApprovalTypes  []string `dynamodbav:"owner_approval_types"`
	StepDeadlineSeconds int64    `dynamodbav:"step_deadline_seconds,omitempty"`
	PulseStaleSeconds   int64    `dynamodbav:"pulse_stale_seconds,omitempty"`
	FileGuard           string   `dynamodbav:"file_guard,omitempty"`
}

type ownerRecord struct {
	PK           string `dynamodbav:"pk"`
	SK           string `dynamodbav:"sk"`
	Type         string `dynamodbav:"type"`
	Name         string `dynamodbav:"name"`
	Email        string `dynamodbav:"email,omitempty"`
	SlackChannel string `dynamodbav:"slack_channel,omitempty"`
	SlackUserID  string `dynamodbav:"slack_user_id,omitempty"`
}

// agentRecord carries a revision so that concurrent PutAgent calls cannot
// leave memberships that disagree with the agent's project list.
type agentRecord struct {
	PK       string   `dynamodbav:"pk"`
	SK       string   `dynamodbav:"sk"`
	Type     string   `dynamodbav:"type"`
	ID       string   `dynamodbav:"id"`
	Owner    string   `dynamodbav:"owner"`
	Projects []string `dynamodbav:"projects"`
	Revision int      `dynamodbav:"revision"`
}

type memberRecord struct {
	PK      string `dynamodbav:"pk"`
	SK      string `dynamodbav:"sk"`
	Type    string `dynamodbav:"type"`
	Project string `dynamodbav:"project"`
	Agent   string `dynamodbav:"agent"`
}

// getDirectoryItem reads one directory item strongly consistent into record;
// what names the item in errors, and a missing item is ErrNotFound.
func (s *Store) getDirectoryItem(ctx context.Context, pk, sk, what string, record any) error {
	return s.getRecord(ctx, s.tables.Directory, directoryKey(pk, sk), what, record)
}

// Project reads a project's settings.
func (s *Store) Project(ctx context.Context, slug string) (team.Project, error) {
	var r projectRecord
	if err := s.getDirectoryItem(ctx, projectPK(slug), metaSK, "project "+slug, &r); err != nil {
		return team.Project{}, err
	}
	return team.Project{
		Slug: r.Slug, Name: r.Name, OwnerApprovalTypes: r.OwnerApprovalTypes,
		StepDeadline:    time.Duration(r.StepDeadlineSeconds) * time.Second,
		PulseStaleAfter: time.Duration(r.PulseStaleSeconds) * time.Second,
		FileGuard:       r.FileGuard,
	}, nil
}

// PutProject creates or replaces a project's settings (admin command);
// its memberships are untouched.
func (s *Store) PutProject(ctx context.Context, p team.Project) error {
	if p.Slug == "" {
		return fmt.Errorf("put project: no slug")
	}
	return s.putDirectoryItem(ctx, "project "+p.Slug, projectRecord{
		PK: projectPK(p.Slug), SK: metaSK, Type: "project", Slug: p.Slug, Name: p.Name,
		OwnerApprovalTypes:  p.OwnerApprovalTypes,
		StepDeadlineSeconds: int64(p.StepDeadline / time.Second),
		PulseStaleSeconds:   int64(p.PulseStaleAfter / time.Second),
		FileGuard:           p.FileGuard,
	})
}

// Owner reads where an owner's approval requests go.
func (s *Store) Owner(ctx context.Context, name string) (team.Owner, error) {
	var r ownerRecord
	if err := s.getDirectoryItem(ctx, ownerPK(name), metaSK, "owner "+name, &r); err != nil {
		return team.Owner{}, err
	}
	return team.Owner{Name: r.Name, Email: r.Email, SlackChannel: r.SlackChannel, SlackUserID: r.SlackUserID}, nil
}

// PutOwner creates or replaces an owner (admin command).
func (s *Store) PutOwner(ctx context.Context, o team.Owner) error {
	if o.Name == "" || strings.Contains(o.Name, "/") {
		return fmt.Errorf("put owner: name %q must be non-empty and without /", o.Name)
	}
	return s.putDirectoryItem(ctx, "owner "+o.Name, ownerRecord{
		PK: ownerPK(o.Name), SK: metaSK, Type: "owner", Name: o.Name, Email: o.Email, SlackChannel: o.SlackChannel,
		SlackUserID: o.SlackUserID,
	})
}

func (s *Store) putDirectoryItem(ctx context.Context, what string, record any) error {
	item, err := marshalItem(record)
	if err != nil {
		return fmt.Errorf("put %s: %w", what, err)
	}
	if _, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.tables.Directory), Item: item}); err != nil {
		return fmt.Errorf("put %s: %w", what, err)
	}
	return nil
}

// Agent reads a directory member.
func (s *Store) Agent(ctx context.Context, id string) (team.Agent, error) {
	var r agentRecord
	if err := s.getDirectoryItem(ctx, agentPK(id), metaSK, "agent "+id, &r); err != nil {
		return team.Agent{}, err
	}
	return r.agent(), nil
}

func (r agentRecord) agent() team.Agent {
	return team.Agent{ID: r.ID, Owner: r.Owner, Projects: r.Projects}
}

// PutAgent creates or replaces an agent and its project memberships in one
// transaction (admin command). The owner and every project must exist
// (ErrNotFound naming the missing one); a concurrent PutAgent of the same
// agent is ErrConflict. a.Owner, when empty, is the owner part of a.ID.
func (s *Store) PutAgent(ctx context.Context, a team.Agent) error {
	owner, name, ok := strings.Cut(a.ID, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return fmt.Errorf("put agent: id %q is not owner/agent", a.ID)
	}
	if a.Owner == "" {
		a.Owner = owner
	}
	if a.Owner != owner {
		return fmt.Errorf("put agent %s: owner %q differs from the id's owner %q", a.ID, a.Owner, owner)
	}
	projects := slices.Clone(a.Projects)
	slices.Sort(projects)
	projects = slices.Compact(projects)

	var old agentRecord
	err := s.getDirectoryItem(ctx, agentPK(a.ID), metaSK, "agent "+a.ID, &old)
	if err != nil && !errors.Is(err, team.ErrNotFound) {
		return fmt.Errorf("put agent: %w", err)
	}

	agentItem, err := marshalItem(agentRecord{
		PK: agentPK(a.ID), SK: metaSK, Type: "agent", ID: a.ID, Owner: a.Owner,
		Projects: projects, Revision: old.Revision + 1,
	})
	if err != nil {
		return fmt.Errorf("put agent %s: %w", a.ID, err)
	}
	put := &types.Put{TableName: aws.String(s.tables.Directory), Item: agentItem}
	if old.Revision == 0 {
		put.ConditionExpression = aws.String("attribute_not_exists(pk)")
	} else {
		put.ConditionExpression = aws.String("#revision = :revision")
		put.ExpressionAttributeNames = map[string]string{"#revision": "revision"}
		put.ExpressionAttributeValues = map[string]types.AttributeValue{":revision": numberValue(int64(old.Revision))}
	}

	// Item i of the transaction fails for the reason refusals[i].
	items := []types.TransactWriteItem{{Put: put}, s.mustExist(ownerPK(a.Owner))}
	refusals := []error{
		fmt.Errorf("put agent %s: %w", a.ID, team.ErrConflict),
		fmt.Errorf("put agent %s: owner %s: %w", a.ID, a.Owner, team.ErrNotFound),
	}
	for _, p := range projects {
		member, err := marshalItem(memberRecord{PK: projectPK(p), SK: memberPrefix + a.ID, Type: "member", Project: p, Agent: a.ID})
		if err != nil {
			return fmt.Errorf("put agent %s: %w", a.ID, err)
		}
		owned, err := marshalItem(memberRecord{PK: ownerPK(a.Owner), SK: ownedSK(p, a.ID), Type: "owned", Project: p, Agent: a.ID})
		if err != nil {
			return fmt.Errorf("put agent %s: %w", a.ID, err)
		}
		items = append(items, s.mustExist(projectPK(p)),
			types.TransactWriteItem{Put: &types.Put{TableName: aws.String(s.tables.Directory), Item: member}},
			types.TransactWriteItem{Put: &types.Put{TableName: aws.String(s.tables.Directory), Item: owned}})
		refusals = append(refusals, fmt.Errorf("put agent %s: project %s: %w", a.ID, p, team.ErrNotFound), nil, nil)
	}
	for _, p := range old.Projects {
		if !slices.Contains(projects, p) {
			items = append(items,
				types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(s.tables.Directory), Key: directoryKey(projectPK(p), memberPrefix+a.ID)}},
				types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(s.tables.Directory), Key: directoryKey(ownerPK(a.Owner), ownedSK(p, a.ID))}})
			refusals = append(refusals, nil, nil)
		}
	}
	if len(items) > maxTransactItems {
		return fmt.Errorf("put agent %s: too many projects (%d) for one transaction", a.ID, len(projects))
	}

	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	if i, failed := failedCondition(err); failed && i >= 0 && refusals[i] != nil {
		return refusals[i]
	}
	if err != nil {
		return writeError("put agent "+a.ID, err)
	}
	return s.syncTokenProjects(ctx, a.ID, projects)
}

// syncTokenProjects copies an agent's projects onto each of its unrevoked
// tokens (found through the by_agent index), so calls learn memberships with
// the token. It runs right after PutAgent's transaction; when it fails the
// error says so and running PutAgent again finishes the copy.
func (s *Store) syncTokenProjects(ctx context.Context, agentID string, projects []string) error {
	hashes, err := s.liveTokenHashes(ctx, agentID)
	if err != nil {
		return fmt.Errorf("put agent %s: tokens: %w", agentID, err)
	}
	values := map[string]types.AttributeValue{":known": &types.AttributeValueMemberBOOL{Value: true}}
	update := "SET projects_known = :known REMOVE projects"
	if len(projects) > 0 {
		list := make([]types.AttributeValue, len(projects))
		for i, p := range projects {
			list[i] = stringValue(p)
		}
		values[":projects"] = &types.AttributeValueMemberL{Value: list}
		update = "SET projects_known = :known, projects = :projects"
	}
	for _, h := range hashes {
		_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName:                 aws.String(s.tables.Directory),
			Key:                       directoryKey(tokenPK(h), tokenSK),
			UpdateExpression:          aws.String(update),
			ConditionExpression:       aws.String("attribute_exists(pk)"),
			ExpressionAttributeValues: values,
		})
		if _, missing := failedCondition(err); missing { // deleted meanwhile
			continue
		}
		if err != nil {
			return fmt.Errorf("put agent %s: projects of token %s…: %w", agentID, h[:12], err)
		}
	}
	return nil
}

// mustExist is a transaction check that the directory's META item of pk exists.
func (s *Store) mustExist(pk string) types.TransactWriteItem {
	return types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
		TableName:           aws.String(s.tables.Directory),
		Key:                 directoryKey(pk, metaSK),
		ConditionExpression: aws.String("attribute_exists(pk)"),
	}}
}

// ListAgents returns the agents of a project, by id (admin command, Team Pulse).
func (s *Store) ListAgents(ctx context.Context, project string) ([]team.Agent, error) {
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(s.tables.Directory),
		KeyConditionExpression:    aws.String("pk = :pk AND begins_with(sk, :member)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": stringValue(projectPK(project)), ":member": stringValue(memberPrefix)},
		ConsistentRead:            aws.Bool(true),
	}
	keys, err := queryAll(ctx, s.db, in, func(m memberRecord) map[string]types.AttributeValue {
		return directoryKey(agentPK(m.Agent), metaSK)
	})
	if err != nil {
		return nil, fmt.Errorf("agents of %s: %w", project, err)
	}
	items, err := s.batchGet(ctx, s.tables.Directory, keys)
	if err != nil {
		return nil, fmt.Errorf("agents of %s: %w", project, err)
	}
	agents := make([]team.Agent, 0, len(items))
	for _, item := range items {
		var r agentRecord
		if err := unmarshalItem(item, &r); err != nil {
			return nil, fmt.Errorf("agents of %s: %w", project, err)
		}
		agents = append(agents, r.agent())
	}
	slices.SortFunc(agents, func(a, b team.Agent) int { return strings.Compare(a.ID, b.ID) })
	return agents, nil
}

// Batch reads take at most 100 keys; unprocessed keys (throttling) are
// retried a bounded number of times with a growing pause.
const (
	maxBatchKeys      = 100
	maxBatchAttempts  = 5
	batchRetryBackoff = 50 * time.Millisecond
)

// batchGet reads items of one table by key, strongly consistent.
func (s *Store) batchGet(ctx context.Context, table string, keys []map[string]types.AttributeValue) ([]map[string]types.AttributeValue, error) {
	var items []map[string]types.AttributeValue
	for chunk := range slices.Chunk(keys, maxBatchKeys) {
		pending := chunk
		for attempt := 1; len(pending) > 0; attempt++ {
			if attempt > maxBatchAttempts {
				return nil, fmt.Errorf("batch get: %d keys still unprocessed after %d attempts", len(pending), maxBatchAttempts)
			}
			out, err := s.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{
				table: {Keys: pending, ConsistentRead: aws.Bool(true)},
			}})
			if err != nil {
				return nil, fmt.Errorf("batch get: %w", err)
			}
			items = append(items, out.Responses[table]...)
			pending = out.UnprocessedKeys[table].Keys
			if len(pending) > 0 {
				select {
				case <-ctx.Done():
					return nil, fmt.Errorf("batch get: %w", ctx.Err())
				case <-time.After(time.Duration(attempt) * batchRetryBackoff):
				}
			}
		}
	}
	return items, nil
}
