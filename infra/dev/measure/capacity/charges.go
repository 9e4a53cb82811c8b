package main

import (
	"context"
	"reflect"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// writeCharges bills each item written on the larger of its before and
// after images (1 unit per KB, 2× in a transaction). A write that failed its
// condition still consumes: on the larger of the stored item and the new
// one. A cancelled transaction is billed as if it had gone through (an upper
// bound; none happen in the scenario). Global indexes are billed only for
// writes that landed, see indexCharges.
func (r *Recorder) writeCharges(ctx context.Context, ws []itemWrite, ok bool) []charge {
	var cs []charge
	for _, w := range ws {
		after := w.before
		switch {
		case w.check:
		case ok:
			after = r.image(ctx, w.table, w.key)
		case w.put != nil:
			after = w.put
		}
		bytes := max(itemSize(w.before), itemSize(after))
		units := writeUnits(bytes)
		if w.transactional {
			units *= 2
		}
		cs = append(cs, charge{table: w.table, write: true, units: units, bytes: bytes})
		if ok && !w.check {
			cs = append(cs, r.indexCharges(w.table, w.before, after)...)
		}
	}
	return cs
}

// indexCharges bills a table write's global index updates
// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html#GSI.ThroughputConsiderations.Writes):
// an item enters an index (1 write of the new entry) or leaves it (1 write
// of the old one) when it gains or loses the index's key attributes; a
// changed index key is 2 writes (delete + put); a change to projected
// attributes only is 1 write of the larger entry; an item in no index, or
// one whose projection did not change, costs nothing. Index writes are
// billed 1 unit per KB whether or not the table write was transactional.
func (r *Recorder) indexCharges(table string, before, after map[string]types.AttributeValue) []charge {
	var cs []charge
	for _, ix := range r.tables[table].indexes {
		old, cur := ix.entry(before, r.tables[table].keys), ix.entry(after, r.tables[table].keys)
		var units float64
		var bytes int
		switch {
		case old == nil && cur == nil:
			continue
		case old == nil:
			bytes = itemSize(cur)
			units = writeUnits(bytes)
		case cur == nil:
			bytes = itemSize(old)
			units = writeUnits(bytes)
		case !sameValues(old, cur, ix.keys):
			bytes = itemSize(old) + itemSize(cur)
			units = writeUnits(itemSize(old)) + writeUnits(itemSize(cur))
		case !reflect.DeepEqual(old, cur):
			bytes = max(itemSize(old), itemSize(cur))
			units = writeUnits(bytes)
		default:
			continue
		}
		cs = append(cs, charge{table: table, index: ix.name, write: true, units: units, bytes: bytes})
	}
	return cs
}

// entry is an item's index entry (nil when the item lacks an index key):
// the table and index keys plus the projected attributes.
func (ix indexShape) entry(item map[string]types.AttributeValue, tableKeys []string) map[string]types.AttributeValue {
	if item == nil {
		return nil
	}
	for _, k := range ix.keys {
		if _, ok := item[k]; !ok {
			return nil
		}
	}
	if ix.projection == types.ProjectionTypeAll || ix.projection == "" {
		return item
	}
	e := map[string]types.AttributeValue{}
	for _, k := range append(append(append([]string{}, tableKeys...), ix.keys...), ix.include...) {
		if v, ok := item[k]; ok {
			e[k] = v
		}
	}
	return e
}

func sameValues(a, b map[string]types.AttributeValue, keys []string) bool {
	for _, k := range keys {
		if !reflect.DeepEqual(a[k], b[k]) {
			return false
		}
	}
	return true
}
