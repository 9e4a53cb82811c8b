//go:build integration

package endpoint_test

import (
	"context"
	"fmt"
	"github.com/useprickle/prickle/shared/domain/task"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/team"
)

// TestNotFoundAndNotYoursCostTheSame: an agent probing task ids learns
// nothing from the answer or from the work behind it. For every tool that
// takes a task id, a task of another project and an id that does not exist
// give the same refusal (the id aside) after the same DynamoDB requests,
// for a token that carries its projects and for one stored before tokens
// did (which reads the agent in both cases).
func TestNotFoundAndNotYoursCostTheSame(t *testing.T) {
	wt := newWireTeam(t)
	ctx := context.Background()
	for _, a := range []string{"carol/tester", "dave/mobile"} {
		o, _, _ := strings.Cut(a, "/")
		if err := wt.adm.CreateOwner(ctx, team.Owner{Name: o, Email: o + "@example.com"}); err != nil {
			t.Fatal(err)
		}
		if err := wt.adm.CreateAgent(ctx, a, []string{"mobile"}); err != nil {
			t.Fatal(err)
		}
	}
	out, err := wt.svc.HandOffTask(ctx, identity.Caller{Agent: "carol/tester", Owner: "carol", Kind: identity.KindAgent}, team.HandOffInput{
		Project: "mobile", Assignee: "dave/mobile", Packet: task.Packet{Task: "Smoke-test the build.", DeliverableType: "answer", AcceptanceCriteria: []string{"It starts."}},
	})
	if err != nil {
		t.Fatal(err)
	}
	theirs := out.Task.ID
	missing := "tsk_" + strings.Repeat("z", len(theirs)-len("tsk_"))
	if _, _, err := wt.fx.Store.TaskWithHistory(ctx, missing); err == nil {
		t.Fatalf("%s exists", missing)
	}

	args := map[string]string{
		"get_task":        `{"task_id":%q}`,
		"accept_task":     `{"task_id":%q}`,
		"decline_task":    `{"task_id":%q,"reason":"Not mine."}`,
		"save_checkpoint": `{"task_id":%q,"progress":"Looked."}`,
		"return_result":   `{"task_id":%q,"summary":"Done.","evidence":[{"kind":"note","summary":"x"}],"provenance":"agent_generated"}`,
		"review_result":   `{"task_id":%q,"verdict":"accept"}`,
		"cancel_task":     `{"task_id":%q,"reason":"Not needed."}`,
		"update_pulse":    `{"project":"website-v2","doing":"Probing.","task_id":%q}`,
		"hand_off_task":   `{"project":"website-v2","assignee":"bob/reviewer","packet":{"task":"x","deliverable_type":"answer","acceptance_criteria":["y"],"depends_on":[%q]}}`,
	}
	probe := func(t *testing.T, kind string) {
		for tool, format := range args {
			answers := map[string]string{}
			counts := map[string]string{}
			for name, id := range map[string]string{"not found": missing, "not yours": theirs} {
				wt.wire.Take()
				_, refused, text := callTool(t, wt.h, wt.tokens[wireWriter], tool, fmt.Sprintf(format, id))
				n, ops := wt.wire.Take()
				if !refused {
					t.Errorf("%s token, %s %s: served: %.200s", kind, tool, name, text)
				}
				answers[name] = strings.ReplaceAll(text, id, "<id>")
				counts[name] = fmt.Sprintf("%d %v", n, ops)
			}
			if answers["not found"] != answers["not yours"] {
				t.Errorf("%s token, %s: answers differ:\n not found: %s\n not yours: %s", kind, tool, answers["not found"], answers["not yours"])
			}
			if counts["not found"] != counts["not yours"] {
				t.Errorf("%s token, %s: DynamoDB requests differ: not found %s, not yours %s", kind, tool, counts["not found"], counts["not yours"])
			}
			t.Logf("%s token, %s: %q after %s", kind, tool, answers["not found"], counts["not found"])
		}
	}
	t.Run("token with its projects", func(t *testing.T) { probe(t, "current") })

	_, err = wt.fx.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:        aws.String(wt.fx.Tables.Directory),
		Key:              map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "TOKEN#" + identity.Hash(wt.tokens[wireWriter])}, "sk": &types.AttributeValueMemberS{Value: "TOKEN"}},
		UpdateExpression: aws.String("REMOVE projects, projects_known"),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Run("token stored before memberships", func(t *testing.T) { probe(t, "old") })
}
