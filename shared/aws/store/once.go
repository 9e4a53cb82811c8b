package store

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// An update that ADDs to a number (a grant's uses, a day's spend) is not
// idempotent: the SDK's retry of one whose answer was lost would add again,
// or, at a limit, fail its own condition. Each such update carries its own
// id (a onceWrite): it adds the id to a string set of its item and is
// conditioned on the set not holding it yet, and asks for the item back when
// a condition fails (ALL_OLD). A retry of an update that landed then fails
// on its own id, and the item it gets back, holding that id, says it landed.
//
// The ids are kept only as long as a retry can come: in onceSlots sets named
// by the onceSlot the update was sent in (once_0 … once_3). Each update
// removes the set two slots ahead, so an item holds at most about the last
// three slots' ids (it stays small however often it is written), and an id
// stays at least one slot after its slot ends, far longer than the SDK
// retries one call (a few attempts, each bounded by the client's timeout).
const (
	onceSlot  = 5 * time.Minute
	onceSlots = 4
)

type onceWrite struct {
	id         string
	set, stale string // the set this update adds its id to, and the one it clears
}

// newOnceWrite is an update's own id, in the set of the slot of sent.
func newOnceWrite(sent time.Time) (onceWrite, error) {
	id, err := newWriteID()
	if err != nil {
		return onceWrite{}, err
	}
	n := sent.UnixNano() / int64(onceSlot)
	return onceWrite{id: id, set: fmt.Sprintf("once_%d", n%onceSlots), stale: fmt.Sprintf("once_%d", (n+2)%onceSlots)}, nil
}

// Clauses and condition for an update expression, with names() and values().
const (
	onceAdd       = "#once :onceset"                                              // part of the ADD clause
	onceRemove    = "REMOVE #oncestale"                                           // its own clause
	onceCondition = "(attribute_not_exists(#once) OR NOT contains(#once, :once))" // ANDed to the condition
)

func (o onceWrite) names(n map[string]string) map[string]string {
	n["#once"], n["#oncestale"] = o.set, o.stale
	return n
}

func (o onceWrite) values(v map[string]types.AttributeValue) map[string]types.AttributeValue {
	v[":once"], v[":onceset"] = stringValue(o.id), &types.AttributeValueMemberSS{Value: []string{o.id}}
	return v
}

// landed reports whether err is a failed condition whose item (ALL_OLD)
// already holds this update's id: the update landed before, its answer was
// lost, and this is the SDK's retry. It returns that item.
func (o onceWrite) landed(err error) (map[string]types.AttributeValue, bool) {
	var failed *types.ConditionalCheckFailedException
	if !errors.As(err, &failed) {
		return nil, false
	}
	ids, ok := failed.Item[o.set].(*types.AttributeValueMemberSS)
	if !ok || !slices.Contains(ids.Value, o.id) {
		return nil, false
	}
	return failed.Item, true
}

// writeIDAttr is the attribute in which a transaction's own id is stored on
// the items it puts (SaveSteps' steps, RecordRun's run).
const writeIDAttr = "write_id"

// landedTransaction reports whether err is a transaction cancelled on a
// failed condition of an item that holds write (returned by
// ReturnValuesOnConditionCheckFailure ALL_OLD): the transaction that wrote
// it was this one, which landed before (transactions land whole) and whose
// answer was lost, and err is its retry's, run again where the client
// request token was not honoured.
func landedTransaction(err error, write string) bool {
	var cancelled *types.TransactionCanceledException
	if !errors.As(err, &cancelled) {
		return false
	}
	for _, r := range cancelled.CancellationReasons {
		if v, ok := r.Item[writeIDAttr].(*types.AttributeValueMemberS); ok && v.Value == write {
			return true
		}
	}
	return false
}
