package store

import (
	"reflect"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/useprickle/prickle/shared/domain/task"
)

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func n(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
func b(v bool) types.AttributeValue   { return &types.AttributeValueMemberBOOL{Value: v} }
func l(vs ...types.AttributeValue) types.AttributeValue {
	return &types.AttributeValueMemberL{Value: append([]types.AttributeValue{}, vs...)}
}
func m(kv map[string]types.AttributeValue) types.AttributeValue {
	return &types.AttributeValueMemberM{Value: kv}
}

var null types.AttributeValue = &types.AttributeValueMemberNULL{Value: true}

// oldShapeItem is a task item as the store wrote it before the compact
// encoding: the domain's JSON names, every field present (NULL, empty
// lists), id, type and created_at stored beside pk and created_key.
func oldShapeItem(withResult bool) map[string]types.AttributeValue {
	item := map[string]types.AttributeValue{
		"pk": s("TASK#tsk_old1"), "sk": s("TASK"), "type": s("task"), "id": s("tsk_old1"),
		"project": s("website-v2"), "state": s("working"), "waiting_on": null,
		"requester": s("bob/reviewer"), "assignee": s("alice/writer"),
		"packet": m(map[string]types.AttributeValue{
			"task": s("Draft the hero"), "deliverable_type": s("answer"), "acceptance_criteria": l(s("short")),
			"context": s(""), "files": l(), "depends_on": l(),
		}),
		"result": null,
		"latest_checkpoint": m(map[string]types.AttributeValue{
			"progress": s("half"), "decisions": l(s("lead with coordination")), "files_touched": l(),
			"next_steps": l(), "open_questions": l(),
		}),
		"created_at": s("2026-11-29T09:00:00.123Z"), "updated_at": s("2026-11-29T09:05:00Z"),
		"created_key": s("2026-11-29T09:00:00.123Z#tsk_old1"), "version": n("3"),
		"pending": l(m(map[string]types.AttributeValue{
			"seq": n("3"), "move": s("00ff00ff00ff00ff"), "at": s("2026-11-29T09:05:00Z"), "by": s("alice/writer"),
			"action": s("save_checkpoint"), "from": s("working"), "to": s("working"), "note": null,
		})),
	}
	if withResult {
		item["state"] = s("verifying")
		item["result"] = m(map[string]types.AttributeValue{
			"summary": s("Drafted."), "provenance": s("agent_generated"), "returned_by": s("alice/writer"),
			"returned_at": s("2026-11-29T09:05:00Z"),
			"evidence":    l(m(map[string]types.AttributeValue{"kind": s("link"), "summary": s("the PR"), "url": s("https://example.com/pr/1")})),
		})
	}
	return item
}

func oldShapeTask(withResult bool) task.Task {
	t := task.Task{
		ID: "tsk_old1", Project: "website-v2", State: task.Working, Requester: "bob/reviewer", Assignee: "alice/writer",
		Packet: task.Packet{Task: "Draft the hero", DeliverableType: "answer", AcceptanceCriteria: []string{"short"},
			Context: "", Files: []string{}, DependsOn: []string{}},
		LatestCheckpoint: &task.Checkpoint{Progress: "half", Decisions: []string{"lead with coordination"},
			FilesTouched: []string{}, NextSteps: []string{}, OpenQuestions: []string{}},
		CreatedAt: time.Date(2026, 11, 29, 9, 0, 0, 123e6, time.UTC), UpdatedAt: time.Date(2026, 11, 29, 9, 5, 0, 0, time.UTC),
		Version: 3,
	}
	if withResult {
		t.State = task.Verifying
		t.Result = &task.Result{Summary: "Drafted.", Provenance: "agent_generated", ReturnedBy: "alice/writer",
			ReturnedAt: t.UpdatedAt, Evidence: []task.Evidence{{Kind: "link", Summary: "the PR", URL: "https://example.com/pr/1"}}}
	}
	return t
}

func TestTaskItemsOfBothShapesDecode(t *testing.T) {
	waiting := "owner"
	note := "ready for review"
	inProgress := task.Working
	full := oldShapeTask(true)
	full.WaitingOn = &waiting
	full.Result.Evidence = append(full.Result.Evidence, task.Evidence{Kind: "test_output", Summary: "green", Content: "ok 12/12"})
	full.LatestCheckpoint.OpenQuestions = []string{"which CTA?"}
	fresh := oldShapeTask(false)
	fresh.LatestCheckpoint = nil
	fresh.State = task.Requested

	newShape := func(tk task.Task) map[string]types.AttributeValue {
		item, err := marshalItem(newTaskRecord(tk, tk.Version))
		if err != nil {
			t.Fatal(err)
		}
		return item
	}
	for _, tc := range []struct {
		name string
		item map[string]types.AttributeValue
		want task.Task
	}{
		{"old shape, no result", oldShapeItem(false), oldShapeTask(false)},
		{"old shape with a result", oldShapeItem(true), oldShapeTask(true)},
		{"new shape, every field set", newShape(full), full},
		{"new shape, empty lists, no result or checkpoint", newShape(fresh), fresh},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeTask(tc.item)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}

	t.Run("carried lines of both shapes", func(t *testing.T) {
		r := newTaskRecord(full, 4)
		r.Pending = pendingLines{
			newLineRecord(3, "aa", task.Event{At: full.UpdatedAt, By: "alice/writer", Action: "save_checkpoint", From: &inProgress, To: task.Working}),
			newLineRecord(4, "bb", task.Event{At: full.UpdatedAt, By: "alice/writer", Action: "return_result", From: &inProgress, To: task.Verifying, Note: &note}),
		}
		item, err := marshalItem(r)
		if err != nil {
			t.Fatal(err)
		}
		var back taskRecord
		if err := unmarshalItem(item, &back); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back.Pending, r.Pending) {
			t.Errorf("new-shape lines: got %+v, want %+v", back.Pending, r.Pending)
		}
		var old taskRecord
		if err := unmarshalItem(oldShapeItem(false), &old); err != nil {
			t.Fatal(err)
		}
		want := pendingLines{newLineRecord(3, "00ff00ff00ff00ff", task.Event{At: full.UpdatedAt, By: "alice/writer", Action: "save_checkpoint", From: &inProgress, To: task.Working})}
		if !reflect.DeepEqual(old.Pending, want) {
			t.Errorf("old-shape lines: got %+v, want %+v", old.Pending, want)
		}
	})
}

// TestNewTaskItemsStoreNothingTwiceAndNoEmptyValues checks what made a small
// task item ~1 KB is gone: no NULL, no empty list, no attribute derivable
// from another, no long names inside the nested maps.
func TestNewTaskItemsStoreNothingTwiceAndNoEmptyValues(t *testing.T) {
	tk := oldShapeTask(false)
	item, err := marshalItem(newTaskRecord(tk, 3))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"id", "type", "created_at", "waiting_on", "result"} {
		if _, ok := item[name]; ok {
			t.Errorf("item stores %s", name)
		}
	}
	var walk func(path string, v types.AttributeValue)
	walk = func(path string, v types.AttributeValue) {
		switch v := v.(type) {
		case *types.AttributeValueMemberNULL:
			t.Errorf("%s is NULL", path)
		case *types.AttributeValueMemberL:
			if len(v.Value) == 0 {
				t.Errorf("%s is an empty list", path)
			}
			for _, e := range v.Value {
				walk(path+"[]", e)
			}
		case *types.AttributeValueMemberM:
			for k, e := range v.Value {
				if len(k) > 2 {
					t.Errorf("%s.%s: a nested name longer than 2 bytes", path, k)
				}
				walk(path+"."+k, e)
			}
		}
	}
	for k, v := range item {
		walk(k, v)
	}
}

// OldShapeItem is oldShapeItem for the integration tests, which put one in
// a table as a deployed table holds it.
var OldShapeItem = oldShapeItem

func TestAddedLinesOfAnOldShapeImageMovedToTheNewShape(t *testing.T) {
	tk := oldShapeTask(true)
	tk.State = task.Completed
	working, verifying := task.Working, task.Verifying
	r := newTaskRecord(tk, 4)
	r.Pending = pendingLines{
		newLineRecord(3, "00ff00ff00ff00ff", task.Event{At: tk.UpdatedAt, By: "alice/writer", Action: "save_checkpoint", From: &working, To: task.Working}),
		newLineRecord(4, "bb", task.Event{At: tk.UpdatedAt, By: "bob/reviewer", Action: "review_result", From: &verifying, To: task.Completed}),
	}
	item, err := marshalItem(r)
	if err != nil {
		t.Fatal(err)
	}
	var rec events.DynamoDBEventRecord
	rec.Change.OldImage, rec.Change.NewImage = toStream(t, oldShapeItem(true)), toStream(t, item)
	lines, err := AddedLines(rec)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 1 || lines[0].TaskID != "tsk_old1" || lines[0].Event().Seq != 4 || lines[0].Event().Action != "review_result" {
		t.Errorf("added lines = %+v, want line 4 of tsk_old1 only", lines)
	}
	got, ok, err := TaskFromImage(rec.Change.OldImage)
	if err != nil || !ok || !reflect.DeepEqual(got, oldShapeTask(true)) {
		t.Errorf("old image: %+v %v %v", got, ok, err)
	}
}
