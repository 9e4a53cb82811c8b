//go:build integration

package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/useprickle/prickle/shared/aws/store"
	"github.com/useprickle/prickle/shared/aws/store/storetest"
	"github.com/useprickle/prickle/shared/domain/event"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/jobs/taskevents"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/teamtest"
)

// checkpoint is the move save_checkpoint makes from version prev of tk.
func checkpoint(tk task.Task, n int) task.Move {
	at := tk.CreatedAt.Add(time.Duration(n) * time.Minute)
	note := fmt.Sprintf("checkpoint %d", n)
	next := tk
	next.UpdatedAt = at
	from := tk.State
	return task.Move{Task: next, Event: task.Event{At: at, By: tk.Assignee, Action: "save_checkpoint", From: &from, To: tk.State, Note: &note}}
}

// moveN reads the task and makes its next checkpoint move, as the team service does.
func moveN(t *testing.T, st *store.Store, id string, n int) {
	t.Helper()
	ctx := context.Background()
	cur, err := st.Task(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.ApplyMove(ctx, cur.Version, checkpoint(cur, n)); err != nil {
		t.Fatalf("move %d: %v", n, err)
	}
}

// rawPartition is what the table holds for a task: how many lines its item
// carries and which HIST items are filed.
func rawPartition(t *testing.T, f fixture, id string) (pending int, filed []string) {
	t.Helper()
	out, err := f.client.Query(context.Background(), &dynamodb.QueryInput{
		TableName:                 aws.String(f.tables.Tasks),
		KeyConditionExpression:    aws.String("pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: "TASK#" + id}},
		ConsistentRead:            aws.Bool(true),
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range out.Items {
		sk := it["sk"].(*types.AttributeValueMemberS).Value
		if sk == "TASK" {
			if l, ok := it["pending"].(*types.AttributeValueMemberL); ok {
				pending = len(l.Value)
			}
			continue
		}
		filed = append(filed, sk)
	}
	return pending, filed
}

// wantHistory checks every history read shows lines 1..n in order, the
// checkpoint lines with their notes.
func wantHistory(t *testing.T, st *store.Store, id string, n int) {
	t.Helper()
	ctx := context.Background()
	h, err := st.History(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	_, h2, err := st.TaskWithHistory(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string][]task.Event{"History": h, "TaskWithHistory": h2} {
		if len(got) != n {
			t.Fatalf("%s has %d lines, want %d: %+v", name, len(got), n, got)
		}
		for i, e := range got {
			if e.Seq != i+1 {
				t.Errorf("%s line %d has seq %d", name, i, e.Seq)
			}
			if i > 0 && (e.Note == nil || *e.Note != fmt.Sprintf("checkpoint %d", i)) {
				t.Errorf("%s line %d = %+v, want checkpoint %d", name, i+1, e, i)
			}
		}
	}
	for _, seq := range []int{1, n} {
		if e, err := st.HistoryLine(ctx, id, seq); err != nil || e.Seq != seq {
			t.Errorf("HistoryLine(%d) = %+v, %v", seq, e, err)
		}
	}
}

type discard struct{}

func (discard) Publish(context.Context, ...event.Event) error { return nil }

// TestAMoveIsOneConditionalWrite: a move is one PutItem (no transaction),
// after the task's read; creating a task is one PutItem too.
func TestAMoveIsOneConditionalWrite(t *testing.T) {
	fx := storetest.New(t)
	p := storetest.NewProxy(t)
	st := p.Store(fx)
	ctx := context.Background()
	tk := teamtest.RoutedTask("one-write", "website-v2", "ana/claude", "bo/codex", base)
	if err := st.CreateTask(ctx, tk, created(tk)); err != nil {
		t.Fatal(err)
	}
	if n, ops := p.Take(); n != 1 || ops["PutItem"] != 1 {
		t.Errorf("create: %d requests %v, want 1 PutItem", n, ops)
	}
	for i := 1; i <= 3; i++ {
		cur, err := st.Task(ctx, tk.ID)
		if err != nil {
			t.Fatal(err)
		}
		if n, ops := p.Take(); n != 1 || ops["Query"] != 1 {
			t.Errorf("read %d: %d requests %v, want 1 Query", i, n, ops)
		}
		if err := st.ApplyMove(ctx, cur.Version, checkpoint(cur, i)); err != nil {
			t.Fatal(err)
		}
		if n, ops := p.Take(); n != 1 || ops["PutItem"] != 1 {
			t.Errorf("move %d: %d requests %v, want 1 PutItem", i, n, ops)
		}
	}
	// A move from a version that is gone loses, writes nothing, and says so.
	if err := st.ApplyMove(ctx, 2, checkpoint(tk, 9)); !errors.Is(err, team.ErrConflict) {
		t.Errorf("stale move: err = %v, want ErrConflict", err)
	}
	wantHistory(t, st, tk.ID, 4)
}

// TestHistoryIsGapFreeBeforeAndAfterFiling: without the stream's filer the
// lines ride on the task item and every read shows them; the filer (the
// task-events handler over the emulator's stream) files each once, also
// when it gets the same records twice, and the next move drops what it saw
// filed.
func TestHistoryIsGapFreeBeforeAndAfterFiling(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	tk := teamtest.RoutedTask("gap-free", "website-v2", "ana/claude", "bo/codex", base)
	mustCreate(t, f, tk)
	for i := 1; i <= 3; i++ {
		moveN(t, f.store, tk.ID, i)
	}
	if pending, filed := rawPartition(t, f, tk.ID); pending != 4 || len(filed) != 0 {
		t.Fatalf("before filing: %d pending, filed %v; want 4 pending, none filed", pending, filed)
	}
	wantHistory(t, f.store, tk.ID, 4)

	reader := storetest.NewStreamReader(f.client, storetest.NewStreamsClient(storetest.Endpoint(t)), f.tables.Tasks)
	batch, err := reader.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	h := taskevents.New(f.store, discard{})
	for range 2 {
		if err := h.Handle(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	pending, filed := rawPartition(t, f, tk.ID)
	if fmt.Sprint(filed) != "[HIST#000001 HIST#000002 HIST#000003 HIST#000004]" || pending != 4 {
		t.Fatalf("after filing twice: %d pending, filed %v", pending, filed)
	}
	wantHistory(t, f.store, tk.ID, 4)

	moveN(t, f.store, tk.ID, 4)
	if pending, _ := rawPartition(t, f, tk.ID); pending != 1 {
		t.Errorf("the move after filing carries %d lines, want only its own", pending)
	}
	wantHistory(t, f.store, tk.ID, 5)
}

// TestPendingIsBoundedWithTheFilerStopped: with no filer at all, a task item
// never carries more than 8 lines; the move that would carry a ninth files
// the older ones itself in its transaction, and history stays whole.
func TestPendingIsBoundedWithTheFilerStopped(t *testing.T) {
	fx := storetest.New(t)
	f := fixture{store: fx.Store, client: fx.Client, tables: fx.Tables}
	p := storetest.NewProxy(t)
	st := p.Store(fx)
	tk := teamtest.RoutedTask("bounded", "website-v2", "ana/claude", "bo/codex", base)
	mustCreate(t, f, tk)
	transactions := 0
	for i := 1; i <= 20; i++ {
		moveN(t, st, tk.ID, i)
		_, ops := p.Take()
		transactions += ops["TransactWriteItems"]
		if pending, _ := rawPartition(t, f, tk.ID); pending > 8 || pending < 1 {
			t.Fatalf("after move %d the item carries %d lines, want 1..8", i, pending)
		}
	}
	if transactions != 2 {
		t.Errorf("%d moves filed lines themselves, want 2 (moves 8 and 16)", transactions)
	}
	pending, filed := rawPartition(t, f, tk.ID)
	if len(filed) != 16 || pending != 5 {
		t.Errorf("filed %d lines, %d pending; want 16 and 5", len(filed), pending)
	}
	wantHistory(t, st, tk.ID, 21)
}

// TestRetriedMoveThatLandedSucceeds: a creation's PutItem, then a move's,
// reaches the emulator but its answer is lost; the SDK's retry finds its
// condition failed, and the store, reading the task again, sees its own
// move's line and answers success, not "changed by another call".
func TestRetriedMoveThatLandedSucceeds(t *testing.T) {
	fx := storetest.New(t)
	p := storetest.NewProxy(t)
	st := p.Store(fx, func(o *dynamodb.Options) {
		o.HTTPClient = awshttp.NewBuildableClient().WithTimeout(time.Second)
	})
	ctx := context.Background()
	tk := teamtest.RoutedTask("retried", "website-v2", "ana/claude", "bo/codex", base)
	p.Inject(storetest.Rule{Fault: storetest.LostAnswer, Op: "PutItem", Times: 1})
	if err := st.CreateTask(ctx, tk, created(tk)); err != nil {
		t.Fatalf("a creation that landed, retried: %v", err)
	}
	if _, ops := p.Take(); ops["PutItem"] != 2 || ops["Query"] != 1 {
		t.Errorf("create: requests %v, want the PutItem, its retry and one Query", ops)
	}
	// Creating it again, as another call would, is still a conflict.
	if err := st.CreateTask(ctx, tk, created(tk)); !errors.Is(err, team.ErrConflict) {
		t.Errorf("second create: err = %v, want ErrConflict", err)
	}
	cur, err := st.Task(ctx, tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	p.Take()
	p.Inject(storetest.Rule{Fault: storetest.LostAnswer, Op: "PutItem", Times: 1})
	if err := st.ApplyMove(ctx, cur.Version, checkpoint(cur, 1)); err != nil {
		t.Fatalf("a move that landed, retried: %v", err)
	}
	if got := p.Injected()[storetest.LostAnswer]; got != 2 {
		t.Fatalf("the proxy lost %d answers, want 2", got)
	}
	if _, ops := p.Take(); ops["PutItem"] != 2 || ops["Query"] != 1 {
		t.Errorf("requests %v, want the PutItem, its retry and one Query", ops)
	}
	wantHistory(t, st, tk.ID, 2)

	// Another call's move from the same version is still a lost race.
	if err := st.ApplyMove(ctx, cur.Version, checkpoint(cur, 7)); !errors.Is(err, team.ErrConflict) {
		t.Errorf("the other call's move: err = %v, want ErrConflict", err)
	}
	wantHistory(t, st, tk.ID, 2)
}
