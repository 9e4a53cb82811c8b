//go:build integration

package store_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/useprickle/prickle/shared/aws/store"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/team"
)

// TestTaskItemsWrittenBeforeTheCompactEncodingStillWork puts a task item
// as the store wrote it before (JSON names, NULLs, empty lists, id, type,
// created_at) and reads it through every reader: the task, its history,
// both kinds of index listing; then moves it, which rewrites it compactly
// with its old carried line.
func TestTaskItemsWrittenBeforeTheCompactEncodingStillWork(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if _, err := f.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(f.tables.Tasks), Item: store.OldShapeItem(true)}); err != nil {
		t.Fatal(err)
	}
	got, err := f.store.Task(ctx, "tsk_old1")
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != "tsk_old1" || got.Version != 3 || got.CreatedAt.Nanosecond() != 123e6 || got.Result == nil ||
		got.Result.Evidence[0].URL != "https://example.com/pr/1" || got.LatestCheckpoint.Progress != "half" || got.Packet.Files == nil {
		t.Fatalf("old task read as %+v", got)
	}
	_, h, err := f.store.TaskWithHistory(ctx, "tsk_old1")
	if err != nil || len(h) != 1 || h[0].Seq != 3 || h[0].Action != "save_checkpoint" {
		t.Fatalf("history = %+v, %v", h, err)
	}
	for _, q := range []team.TaskQuery{
		{Project: "website-v2"},
		{Project: "website-v2", Involving: "alice/writer", Role: task.RoleAssignee},
		{Project: "website-v2", Involving: "bob/reviewer", Role: task.RoleAny},
	} {
		page, err := f.store.ListTasks(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Tasks) != 1 || !reflect.DeepEqual(page.Tasks[0], got) {
			t.Errorf("%+v listed %+v, want %+v", q, page.Tasks, got)
		}
	}

	next := got
	next.State, next.UpdatedAt = task.Completed, got.UpdatedAt.Add(1e9)
	verifying := task.Verifying
	move := task.Move{Task: next, Event: task.Event{At: next.UpdatedAt, By: "bob/reviewer", Action: "review_result", From: &verifying, To: task.Completed}}
	if err := f.store.ApplyMove(ctx, 3, move); err != nil {
		t.Fatal(err)
	}
	moved, h, err := f.store.TaskWithHistory(ctx, "tsk_old1")
	if err != nil {
		t.Fatal(err)
	}
	next.Version = 4
	if !reflect.DeepEqual(moved, next) || len(h) != 2 || h[0].Action != "save_checkpoint" || h[1].Action != "review_result" {
		t.Errorf("after the move: %+v with history %+v", moved, h)
	}
	out, err := f.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(f.tables.Tasks), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "TASK#tsk_old1"}, "sk": &types.AttributeValueMemberS{Value: "TASK"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"id", "type", "created_at", "waiting_on"} {
		if _, ok := out.Item[name]; ok {
			t.Errorf("the moved item still stores %s", name)
		}
	}
	if _, ok := out.Item["packet"].(*types.AttributeValueMemberM).Value["task"]; ok {
		t.Error("the moved item's packet keeps its old names")
	}
}
