package store

import (
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/useprickle/prickle/shared/domain/task"
)

// Every move rewrites the task item and is billed per started KB of it, so
// the values nested in it are stored compactly: short attribute names, and
// nothing for an empty value (an absent list reads as empty, an absent
// string as ""). Items written before carry them under their JSON names
// with every field present (NULL, empty lists); each value is read in
// whichever shape it has, told apart by a name only the old shape holds.

// storedPacket is a task's packet as its item holds it.
type storedPacket task.Packet

type packetRecord struct {
	Task               string   `dynamodbav:"t,omitempty"`
	DeliverableType    string   `dynamodbav:"dt,omitempty"`
	AcceptanceCriteria []string `dynamodbav:"ac,omitempty"`
	Context            string   `dynamodbav:"c,omitempty"`
	Files              []string `dynamodbav:"f,omitempty"`
	DependsOn          []string `dynamodbav:"d,omitempty"`
}

// MarshalDynamoDBAttributeValue stores the packet under short names, without its empty values.
func (p storedPacket) MarshalDynamoDBAttributeValue() (types.AttributeValue, error) {
	r := packetRecord(p)
	r.AcceptanceCriteria, r.Files, r.DependsOn = nilIfEmpty(r.AcceptanceCriteria), nilIfEmpty(r.Files), nilIfEmpty(r.DependsOn)
	return attributevalue.Marshal(r)
}

// UnmarshalDynamoDBAttributeValue reads a packet of either shape.
func (p *storedPacket) UnmarshalDynamoDBAttributeValue(av types.AttributeValue) error {
	return decodeEither(av, "packet", "task", (*task.Packet)(p), func(r packetRecord) {
		*p = storedPacket{Task: r.Task, DeliverableType: r.DeliverableType, AcceptanceCriteria: nonNil(r.AcceptanceCriteria),
			Context: r.Context, Files: nonNil(r.Files), DependsOn: nonNil(r.DependsOn)}
	})
}

// storedResult is a task's result as its item holds it.
type storedResult task.Result

type resultRecord struct {
	Summary    string           `dynamodbav:"s,omitempty"`
	Evidence   []evidenceRecord `dynamodbav:"e,omitempty"`
	Provenance string           `dynamodbav:"p,omitempty"`
	ReturnedBy string           `dynamodbav:"by,omitempty"`
	ReturnedAt time.Time        `dynamodbav:"at"`
}

type evidenceRecord struct {
	Kind    string `dynamodbav:"k,omitempty"`
	Summary string `dynamodbav:"s,omitempty"`
	URL     string `dynamodbav:"u,omitempty"`
	Content string `dynamodbav:"c,omitempty"`
}

// MarshalDynamoDBAttributeValue stores the result under short names, without its empty values.
func (r storedResult) MarshalDynamoDBAttributeValue() (types.AttributeValue, error) {
	rec := resultRecord{Summary: r.Summary, Provenance: r.Provenance, ReturnedBy: r.ReturnedBy, ReturnedAt: r.ReturnedAt.UTC()}
	for _, e := range r.Evidence {
		rec.Evidence = append(rec.Evidence, evidenceRecord(e))
	}
	return attributevalue.Marshal(rec)
}

// UnmarshalDynamoDBAttributeValue reads a result of either shape.
func (r *storedResult) UnmarshalDynamoDBAttributeValue(av types.AttributeValue) error {
	return decodeEither(av, "result", "summary", (*task.Result)(r), func(rec resultRecord) {
		*r = storedResult{Summary: rec.Summary, Evidence: []task.Evidence{}, Provenance: rec.Provenance, ReturnedBy: rec.ReturnedBy, ReturnedAt: rec.ReturnedAt}
		for _, e := range rec.Evidence {
			r.Evidence = append(r.Evidence, task.Evidence(e))
		}
	})
}

// storedCheckpoint is a task's latest checkpoint as its item holds it.
type storedCheckpoint task.Checkpoint

type checkpointRecord struct {
	Progress      string   `dynamodbav:"p,omitempty"`
	Decisions     []string `dynamodbav:"d,omitempty"`
	FilesTouched  []string `dynamodbav:"f,omitempty"`
	NextSteps     []string `dynamodbav:"n,omitempty"`
	OpenQuestions []string `dynamodbav:"q,omitempty"`
}

// MarshalDynamoDBAttributeValue stores the checkpoint under short names, without its empty values.
func (c storedCheckpoint) MarshalDynamoDBAttributeValue() (types.AttributeValue, error) {
	r := checkpointRecord(c)
	r.Decisions, r.FilesTouched = nilIfEmpty(r.Decisions), nilIfEmpty(r.FilesTouched)
	r.NextSteps, r.OpenQuestions = nilIfEmpty(r.NextSteps), nilIfEmpty(r.OpenQuestions)
	return attributevalue.Marshal(r)
}

// UnmarshalDynamoDBAttributeValue reads a checkpoint of either shape.
func (c *storedCheckpoint) UnmarshalDynamoDBAttributeValue(av types.AttributeValue) error {
	return decodeEither(av, "checkpoint", "progress", (*task.Checkpoint)(c), func(r checkpointRecord) {
		*c = storedCheckpoint{Progress: r.Progress, Decisions: nonNil(r.Decisions), FilesTouched: nonNil(r.FilesTouched),
			NextSteps: nonNil(r.NextSteps), OpenQuestions: nonNil(r.OpenQuestions)}
	})
}

// pendingLines is the history lines a task item carries (pending.go), each
// stored under short names; lines stored before carry a HIST item's names.
type pendingLines []lineRecord

type carriedLine struct {
	Seq    int         `dynamodbav:"s"`
	Move   string      `dynamodbav:"m,omitempty"`
	At     time.Time   `dynamodbav:"at"`
	By     string      `dynamodbav:"by"`
	Action string      `dynamodbav:"a"`
	From   *task.State `dynamodbav:"f,omitempty"`
	To     task.State  `dynamodbav:"t"`
	Note   *string     `dynamodbav:"n,omitempty"`
}

// MarshalDynamoDBAttributeValue stores each line under short names, without a NULL from or note.
func (ls pendingLines) MarshalDynamoDBAttributeValue() (types.AttributeValue, error) {
	out := make([]carriedLine, len(ls))
	for i, l := range ls {
		out[i] = carriedLine{Seq: l.Seq, Move: l.Move, At: l.At, By: l.By, Action: l.Action, From: l.From, To: l.To, Note: l.Note}
	}
	return attributevalue.Marshal(out)
}

// UnmarshalDynamoDBAttributeValue reads lines of either shape, even mixed in one list.
func (ls *pendingLines) UnmarshalDynamoDBAttributeValue(av types.AttributeValue) error {
	if _, null := av.(*types.AttributeValueMemberNULL); null {
		*ls = nil
		return nil
	}
	l, ok := av.(*types.AttributeValueMemberL)
	if !ok {
		return fmt.Errorf("pending lines: %T is not a list", av)
	}
	out := make(pendingLines, len(l.Value))
	for i, e := range l.Value {
		m, err := asMap(e, "pending line")
		if err != nil {
			return err
		}
		if _, old := m["seq"]; old {
			err = unmarshalJSONNamed(e, &out[i])
		} else {
			var c carriedLine
			err = attributevalue.Unmarshal(e, &c)
			out[i] = lineRecord{Seq: c.Seq, Move: c.Move, Event: task.Event{At: c.At, By: c.By, Action: c.Action, From: c.From, To: c.To, Note: c.Note}}
		}
		if err != nil {
			return fmt.Errorf("pending line %d: %w", i, err)
		}
	}
	*ls = out
	return nil
}

// decodeEither reads a nested value of either shape: the old one, told by
// a name only it holds (oldKey), into old under the domain's JSON names;
// the compact one as a record R, which set keeps. NULL reads as nothing.
func decodeEither[R any](av types.AttributeValue, what, oldKey string, old any, set func(R)) error {
	m, err := asMap(av, what)
	if err != nil || m == nil {
		return err
	}
	if _, isOld := m[oldKey]; isOld {
		return unmarshalJSONNamed(av, old)
	}
	var r R
	if err := attributevalue.Unmarshal(av, &r); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	set(r)
	return nil
}

// asMap is a nested value's map; NULL (an old item's absent value) is nil.
func asMap(av types.AttributeValue, what string) (map[string]types.AttributeValue, error) {
	switch v := av.(type) {
	case *types.AttributeValueMemberM:
		return v.Value, nil
	case *types.AttributeValueMemberNULL:
		return nil, nil
	}
	return nil, fmt.Errorf("%s: %T is not a map", what, av)
}

// unmarshalJSONNamed decodes a value stored under the domain type's JSON names.
func unmarshalJSONNamed(av types.AttributeValue, out any) error {
	err := attributevalue.UnmarshalWithOptions(av, out, func(o *attributevalue.DecoderOptions) { o.TagKey = "json" })
	if err != nil {
		return fmt.Errorf("unmarshal %T: %w", out, err)
	}
	return nil
}

// nilIfEmpty stores an empty list as nothing (omitempty omits only nil).
func nilIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

// nonNil is a stored list read back: absent is empty, as the domain makes it.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
