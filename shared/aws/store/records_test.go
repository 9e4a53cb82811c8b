package store

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/useprickle/prickle/shared/auth/oauthstate"
	"github.com/useprickle/prickle/shared/domain/pulse"
	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/domain/task"
)

// The items below are pinned as deployed tables hold them: every attribute
// name and type a populated (and a sparse) sample marshals to. A record
// that changes how it is built must keep these exactly, and read them back.

var (
	plusOne  = time.FixedZone("plus1", 3600)
	sampleAt = time.Date(2026, 11, 29, 10, 5, 0, 123e6, plusOne)
)

func strp(s string) *string { return &s }

func TestRecordsKeepTheirStoredAttributes(t *testing.T) {
	decided := sampleAt.Add(time.Minute)
	from := task.Working
	fullStep := step.Step{
		ID: "stp_1", TaskID: "tsk_1", Project: "website-v2", Agent: "alice/writer", RunID: "run_1",
		ToolName: "publish", Input: json.RawMessage(`{"a":1}`), Fingerprint: "fp1", Edited: json.RawMessage(`{"a":2}`),
		Kind: "spend", Target: "ads", Amount: &step.Amount{Value: 12.5, Unit: "usd"}, Reason: "launch",
		Status: step.Approved, Message: "ok", DecidedBy: "alice", DecidedAt: &decided, DecidedVia: "slack",
		AllowedBy: "grant g1", BudgetNote: "5 usd left", CreatedAt: sampleAt, ExpiresAt: sampleAt.Add(15 * time.Minute),
	}
	sparseStep := step.Step{
		ID: "stp_2", TaskID: "tsk_1", Project: "website-v2", Agent: "alice/writer", RunID: "run_1",
		ToolName: "publish", Input: json.RawMessage(`{}`), Fingerprint: "fp2", Status: step.Refused,
		CreatedAt: sampleAt, ExpiresAt: sampleAt.Add(time.Hour),
	}
	fullPulse := pulse.Entry{
		AgentID: "alice/writer", Owner: "alice", Project: "website-v2", Availability: "working", Doing: "drafting",
		TaskID: strp("tsk_1"), Branch: strp("hero"), Files: []string{"a.go", "b.go"}, LastDecision: strp("lead"),
		UpdatedAt: sampleAt,
	}
	sparsePulse := pulse.Entry{AgentID: "bob/reviewer", Owner: "bob", Project: "website-v2", Availability: "idle", UpdatedAt: sampleAt}
	line := task.Event{At: sampleAt, By: "alice/writer", Action: "save_checkpoint", From: &from, To: task.Working, Note: strp("half")}
	firstLine := task.Event{At: sampleAt, By: "bob/reviewer", Action: "create", To: task.Requested}
	consent := oauthstate.Connection{ID: "g1", Owner: "alice", Agent: "alice/writer", Client: "c1", ClientName: "Claude", CreatedAt: sampleAt, Revoked: true}
	joined := oauthstate.JoinedRunner{ID: "r1", Owner: "alice", Agent: "alice/writer", Name: "laptop", TokenHash: strings.Repeat("ab", 32), CreatedAt: sampleAt}

	cases := []struct {
		name string
		item func() (map[string]types.AttributeValue, error)
		want map[string]types.AttributeValue
	}{
		{"full step", func() (map[string]types.AttributeValue, error) { return marshalItem(newStepRecord(fullStep)) },
			map[string]types.AttributeValue{
				"task_id": s("tsk_1"), "step_id": s("stp_1"), "project": s("website-v2"), "agent": s("alice/writer"),
				"run_id": s("run_1"), "tool_name": s("publish"), "input": s(`{"a":1}`), "fingerprint": s("fp1"),
				"edited_input": s(`{"a":2}`), "kind": s("spend"), "target": s("ads"),
				"amount": m(map[string]types.AttributeValue{"value": n("12.5"), "unit": s("usd")}),
				"reason": s("launch"), "status": s("approved"), "message": s("ok"), "decided_by": s("alice"),
				"decided_at": s("2026-11-29T09:06:00.123Z"), "decided_via": s("slack"), "allowed_by": s("grant g1"),
				"budget_note": s("5 usd left"), "created_at": s("2026-11-29T09:05:00.123Z"),
				"expires_at": s("2026-11-29T09:20:00.123Z"), "ttl": n("1795944000"),
			}},
		{"sparse step", func() (map[string]types.AttributeValue, error) { return marshalItem(newStepRecord(sparseStep)) },
			map[string]types.AttributeValue{
				"task_id": s("tsk_1"), "step_id": s("stp_2"), "project": s("website-v2"), "agent": s("alice/writer"),
				"run_id": s("run_1"), "tool_name": s("publish"), "input": s(`{}`), "fingerprint": s("fp2"),
				"status": s("refused"), "created_at": s("2026-11-29T09:05:00.123Z"),
				"expires_at": s("2026-11-29T10:05:00.123Z"), "ttl": n("1798538700"),
			}},
		{"full pulse", func() (map[string]types.AttributeValue, error) { return pulseItem(fullPulse) },
			map[string]types.AttributeValue{
				"project": s("website-v2"), "agent_id": s("alice/writer"), "owner": s("alice"), "availability": s("working"),
				"doing": s("drafting"), "task_id": s("tsk_1"), "branch": s("hero"), "files": l(s("a.go"), s("b.go")),
				"last_decision": s("lead"), "updated_at": s("2026-11-29T09:05:00.123Z"),
			}},
		{"sparse pulse", func() (map[string]types.AttributeValue, error) { return pulseItem(sparsePulse) },
			map[string]types.AttributeValue{
				"project": s("website-v2"), "agent_id": s("bob/reviewer"), "owner": s("bob"), "availability": s("idle"),
				"doing": s(""), "task_id": null, "branch": null, "files": null, "last_decision": null,
				"updated_at": s("2026-11-29T09:05:00.123Z"),
			}},
		{"filed line", func() (map[string]types.AttributeValue, error) {
			return marshalItem(newEventRecord("tsk_1", newLineRecord(4, "00ff00ff00ff00ff", line)))
		}, map[string]types.AttributeValue{
			"pk": s("TASK#tsk_1"), "sk": s("HIST#000004"), "type": s("event"), "seq": n("4"), "move": s("00ff00ff00ff00ff"),
			"at": s("2026-11-29T09:05:00.123Z"), "by": s("alice/writer"), "action": s("save_checkpoint"),
			"from": s("working"), "to": s("working"), "note": s("half"),
		}},
		{"filed first line", func() (map[string]types.AttributeValue, error) {
			return marshalItem(newEventRecord("tsk_1", newLineRecord(1, "", firstLine)))
		}, map[string]types.AttributeValue{
			"pk": s("TASK#tsk_1"), "sk": s("HIST#000001"), "type": s("event"), "seq": n("1"),
			"at": s("2026-11-29T09:05:00.123Z"), "by": s("bob/reviewer"), "action": s("create"),
			"from": null, "to": s("requested"), "note": null,
		}},
		{"consent", func() (map[string]types.AttributeValue, error) { return marshalItem(newOAuthGrantRecord(consent)) },
			map[string]types.AttributeValue{
				"pk": s("GRANT#g1"), "sk": s(oauthGrantSK), "grant_id": s("g1"), "owner": s("alice"), "agent_id": s("alice/writer"),
				"client_id": s("c1"), "client_name": s("Claude"), "created_at": s(sortableTime(sampleAt)), "revoked": b(true),
			}},
		{"joined runner", func() (map[string]types.AttributeValue, error) { return marshalItem(newJoinedRunnerRecord(joined)) },
			map[string]types.AttributeValue{
				"pk": s("RUNNER#r1"), "sk": s(joinedRunnerSK), "runner_id": s("r1"), "owner": s("alice"), "agent_id": s("alice/writer"),
				"runner_name": s("laptop"), "token_hash": s(joined.TokenHash), "created_at": s(sortableTime(sampleAt)), "revoked": b(false),
			}},
		{"carried lines", func() (map[string]types.AttributeValue, error) {
			ls := pendingLines{newLineRecord(1, "", firstLine), newLineRecord(4, "00ff00ff00ff00ff", line)}
			return marshalItem(struct {
				Pending pendingLines `json:"pending"`
			}{ls})
		}, map[string]types.AttributeValue{"pending": l(
			m(map[string]types.AttributeValue{"s": n("1"), "at": s("2026-11-29T09:05:00.123Z"), "by": s("bob/reviewer"),
				"a": s("create"), "t": s("requested")}),
			m(map[string]types.AttributeValue{"s": n("4"), "m": s("00ff00ff00ff00ff"), "at": s("2026-11-29T09:05:00.123Z"),
				"by": s("alice/writer"), "a": s("save_checkpoint"), "f": s("working"), "t": s("working"), "n": s("half")}),
		)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.item()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("item:\n got %s\nwant %s", render(got), render(c.want))
			}
		})
	}
}

// TestRecordsReadBackWhatTheyStore decodes the pinned shapes into the domain values they came from.
func TestRecordsReadBackWhatTheyStore(t *testing.T) {
	decided := sampleAt.Add(time.Minute).UTC()
	from := task.Working
	st := step.Step{
		ID: "stp_1", TaskID: "tsk_1", Project: "website-v2", Agent: "alice/writer", RunID: "run_1",
		ToolName: "publish", Input: json.RawMessage(`{"a":1}`), Fingerprint: "fp1", Edited: json.RawMessage(`{"a":2}`),
		Amount: &step.Amount{Value: 12.5, Unit: "usd"}, Status: step.Approved, DecidedAt: &decided,
		CreatedAt: sampleAt.UTC(), ExpiresAt: sampleAt.Add(15 * time.Minute).UTC(),
	}
	sparse := step.Step{ID: "stp_2", TaskID: "tsk_1", Input: json.RawMessage(`{}`), Status: step.Refused,
		CreatedAt: sampleAt.UTC(), ExpiresAt: sampleAt.UTC()}
	for _, want := range []step.Step{st, sparse} {
		item, err := marshalItem(newStepRecord(want))
		if err != nil {
			t.Fatal(err)
		}
		var r stepRecord
		if err := unmarshalItem(item, &r); err != nil {
			t.Fatal(err)
		}
		if got := r.step(); !reflect.DeepEqual(got, want) {
			t.Errorf("step read back:\n got %+v\nwant %+v", got, want)
		}
	}
	p := pulse.Entry{AgentID: "alice/writer", Owner: "alice", Project: "website-v2", Availability: "working",
		TaskID: strp("tsk_1"), Files: []string{"a.go"}, UpdatedAt: sampleAt.UTC()}
	item, err := pulseItem(p)
	if err != nil {
		t.Fatal(err)
	}
	var got pulse.Entry
	if err := unmarshalItem(item, &got); err != nil || !reflect.DeepEqual(got, p) {
		t.Errorf("pulse read back: %+v, %v; want %+v", got, err, p)
	}
	consent := oauthstate.Connection{ID: "g1", Owner: "alice", Agent: "alice/writer", Client: "c1", ClientName: "Claude", CreatedAt: sampleAt.UTC(), Revoked: true}
	readBack(t, "consent", newOAuthGrantRecord(consent), oauthGrantRecord.grant, consent)
	joined := oauthstate.JoinedRunner{ID: "r1", Owner: "alice", Agent: "alice/writer", Name: "laptop", TokenHash: "h", CreatedAt: sampleAt.UTC()}
	readBack(t, "joined runner", newJoinedRunnerRecord(joined), joinedRunnerRecord.runner, joined)
	e := task.Event{Seq: 4, At: sampleAt.UTC(), By: "alice/writer", Action: "save_checkpoint", From: &from, To: task.Working, Note: strp("half")}
	item, err = marshalItem(newEventRecord("tsk_1", newLineRecord(4, "m1", e)))
	if err != nil {
		t.Fatal(err)
	}
	var r eventRecord
	if err := unmarshalItem(item, &r); err != nil {
		t.Fatal(err)
	}
	if got := r.event(); !reflect.DeepEqual(got, e) || r.Move != "m1" || r.Seq != 4 {
		t.Errorf("line read back: %+v (move %q, seq %d), want %+v", got, r.Move, r.Seq, e)
	}
}

// readBack stores record as an item, reads the item back as an R and checks
// that read gives want.
func readBack[R, V any](t *testing.T, what string, record R, read func(R) V, want V) {
	t.Helper()
	item, err := marshalItem(record)
	var r R
	if err == nil {
		err = unmarshalItem(item, &r)
	}
	if got := read(r); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("%s read back: %+v, %v; want %+v", what, got, err, want)
	}
}

// render writes an item with each value's type, for a readable failure.
func render(item map[string]types.AttributeValue) string {
	b, _ := json.Marshal(renderValue(&types.AttributeValueMemberM{Value: item}))
	return string(b)
}

func renderValue(av types.AttributeValue) any {
	switch v := av.(type) {
	case *types.AttributeValueMemberM:
		out := map[string]any{}
		for k, e := range v.Value {
			out[k] = renderValue(e)
		}
		return out
	case *types.AttributeValueMemberL:
		out := []any{}
		for _, e := range v.Value {
			out = append(out, renderValue(e))
		}
		return out
	case *types.AttributeValueMemberS:
		return "S:" + v.Value
	case *types.AttributeValueMemberN:
		return "N:" + v.Value
	case *types.AttributeValueMemberB:
		return "B:" + string(v.Value)
	case *types.AttributeValueMemberNULL:
		return "NULL"
	case *types.AttributeValueMemberBOOL:
		return v.Value
	}
	return reflect.TypeOf(av).String()
}
