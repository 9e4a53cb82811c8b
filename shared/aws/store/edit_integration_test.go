//go:build integration

package store_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/useprickle/prickle/shared/domain/audit"
	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/team"
)

// An owner's edit of a call on the real store: the step keeps the call as
// asked and the edit (each byte for byte), the run is allowed the edit once,
// and the audit trail holds both; an edit refused by the rules stores nothing.
func TestEditedStepOnTheStore(t *testing.T) {
	f := newOwnersFixture(t)
	ctx := context.Background()
	ask := func(input, toolUseID string) team.RequestStepOutput {
		t.Helper()
		out, err := f.svc.RequestStep(ctx, f.run, team.RequestStepInput{ToolName: "Bash", Input: json.RawMessage(input), ToolUseID: toolUseID})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	asked := ask(`{"command":"rm -rf build","description":"Clean <all> & more"}`, "")
	const edit = `{"command":"rm -rf build/tmp","description":"Clean <all> & more"}`

	// Refused edits first: each leaves the step pending, unedited, with no entry.
	entries := func() int {
		es, err := f.store.ProjectAudit(ctx, "web")
		if err != nil {
			t.Fatal(err)
		}
		return len(es)
	}
	n := entries()
	for _, bad := range []struct {
		owner, edit string
	}{
		{"bob", edit},
		{"alice", `["rm -rf build/tmp"]`},
		{"alice", `{"command":"` + strings.Repeat("x", step.MaxInputBytes) + `"}`},
	} {
		if _, err := f.svc.DecideStep(ctx, bad.owner, f.task.ID, asked.StepID, true, json.RawMessage(bad.edit), "", audit.ViaPage); err == nil {
			t.Fatalf("%s's edit %.40s… was accepted", bad.owner, bad.edit)
		}
	}
	if st, _ := f.store.Step(ctx, f.task.ID, asked.StepID); st.Status != step.Pending || st.Edited != nil || entries() != n {
		t.Fatalf("after refused edits: %s, edited %s, %d new entries", st.Status, st.Edited, entries()-n)
	}

	if _, err := f.svc.DecideStep(ctx, "alice", f.task.ID, asked.StepID, true, json.RawMessage(edit), "only tmp", audit.ViaPage); err != nil {
		t.Fatal(err)
	}
	st, err := f.store.Step(ctx, f.task.ID, asked.StepID)
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != step.Approved || string(st.Input) != `{"command":"rm -rf build","description":"Clean <all> & more"}` || string(st.Edited) != edit {
		t.Fatalf("stored: %s, input %s, edited %s", st.Status, st.Input, st.Edited)
	}
	raw, err := f.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(f.tables.Steps),
		Key: map[string]types.AttributeValue{"task_id": &types.AttributeValueMemberS{Value: f.task.ID}, "step_id": &types.AttributeValueMemberS{Value: asked.StepID}}})
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := raw.Item["edited_input"].(*types.AttributeValueMemberS); !ok || v.Value != edit {
		t.Errorf("edited_input attribute = %#v, want the canonical edit as a string", raw.Item["edited_input"])
	}
	// The same edit again (a replayed form) is refused: decided once.
	if _, err := f.svc.DecideStep(ctx, "alice", f.task.ID, asked.StepID, true, json.RawMessage(edit), "", audit.ViaPage); err == nil {
		t.Fatal("a replayed edit was accepted")
	}

	used := ask(`{"command":"rm -rf build"}`, "toolu_1")
	if used.Status != step.Consumed || used.Behavior != "allow" || string(used.UpdatedInput) != edit {
		t.Fatalf("answer = %+v, want allowed once with the edit", used)
	}
	if again := ask(edit, "toolu_2"); again.StepID == asked.StepID || again.Status != step.Pending {
		t.Errorf("the edited call after its use = %+v, want a new pending step", again)
	}

	es, err := f.store.ProjectAudit(ctx, "web")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range es {
		if e.StepID == asked.StepID {
			got[e.Action] = e.Detail
		}
	}
	for action, want := range map[string]string{
		audit.StepApproved: `Bash {"command":"rm -rf build","description":"Clean <all> & more"}; edited by the owner to: Bash ` + edit,
		audit.StepUsed:     `Bash {"command":"rm -rf build","description":"Clean <all> & more"}; used as the owner edited it: Bash ` + edit,
	} {
		if got[action] != want {
			t.Errorf("%s: %q\n want %q", action, got[action], want)
		}
	}
}
