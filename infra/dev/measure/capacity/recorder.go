package main

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
	"github.com/useprickle/prickle/shared/aws/cfn"
)

// Recorder is an SDK middleware that records, for every DynamoDB request
// made while a label is set, what real DynamoDB would bill for it. The
// emulator's ConsumedCapacity is a fixed fake, so units are computed from
// the request and the items it touched: reads from the items returned (or,
// when a filter or projection hides some, from the items evaluated, read
// again without them), writes from each item's image before and after the
// request, read on the side through an unrecorded client.
type Recorder struct {
	shadow *dynamodb.Client // unrecorded: before/after images, evaluated items
	tables map[string]tableShape

	mu       sync.Mutex
	label    string
	call     int  // counts labelled calls
	stream   bool // the requests are task-events', reacting to the call's stream records
	requests []request
}

// request is one DynamoDB request made during a labelled call.
type request struct {
	label   string
	call    int
	op      string // the X-Amz-Target operation, DynamoDB_20120810.<op>
	failed  bool
	charges []charge
}

// charge is the capacity one request consumed on one table or index.
type charge struct {
	table, index string // index empty: the table itself
	write        bool
	units        float64
	bytes        int // the billed size the units come from
}

type tableShape struct {
	keys    []string // partition key, then sort key if any
	indexes []indexShape
}

type indexShape struct {
	name       string
	keys       []string
	projection types.ProjectionType
	include    []string // INCLUDE projection's non-key attributes
}

// NewRecorder knows the tables' keys and global indexes from their specs.
func NewRecorder(shadow *dynamodb.Client, specs []cfn.TableSpec) *Recorder {
	r := &Recorder{shadow: shadow, tables: map[string]tableShape{}}
	for _, s := range specs {
		var shape tableShape
		shape.keys = keyNames(s.Create.KeySchema)
		for _, g := range s.Create.GlobalSecondaryIndexes {
			ix := indexShape{name: aws.ToString(g.IndexName), keys: keyNames(g.KeySchema)}
			if g.Projection != nil {
				ix.projection, ix.include = g.Projection.ProjectionType, g.Projection.NonKeyAttributes
			}
			shape.indexes = append(shape.indexes, ix)
		}
		r.tables[s.Name()] = shape
	}
	return r
}

func keyNames(ks []types.KeySchemaElement) []string {
	names := make([]string, len(ks))
	for i, k := range ks {
		names[i] = aws.ToString(k.AttributeName)
	}
	return names
}

// Label names the calls that follow (a tool); empty stops recording.
func (r *Recorder) Label(label string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.label = label
	if label != "" {
		r.call++
	}
}

// Stream marks the requests that follow as the stream function's, made
// for the current call (its op is then named "<op> by task-events").
func (r *Recorder) Stream(on bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stream = on
}

// Requests returns what was recorded so far.
func (r *Recorder) Requests() []request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]request(nil), r.requests...)
}

// Register adds the recorder to a client's middleware stack
// (dynamodb.Options.APIOptions). It runs at Initialize, where the typed
// input and output are at hand, outside the retry loop.
func (r *Recorder) Register(s *middleware.Stack) error {
	return s.Initialize.Add(middleware.InitializeMiddlewareFunc("PrickleCapacityRecorder", r.handle), middleware.After)
}

func (r *Recorder) handle(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
	r.mu.Lock()
	label, call, stream := r.label, r.call, r.stream
	r.mu.Unlock()
	if label == "" {
		return next.HandleInitialize(ctx, in)
	}
	writes := writesOf(in.Parameters, r.tables)
	for i := range writes {
		writes[i].before = r.image(ctx, writes[i].table, writes[i].key)
	}
	out, md, err := next.HandleInitialize(ctx, in)
	req := request{label: label, call: call, op: operation(in.Parameters), failed: err != nil}
	if stream {
		req.op += " by task-events"
	}
	if len(writes) > 0 {
		req.charges = r.writeCharges(ctx, writes, err == nil)
	} else if err == nil {
		req.charges = r.readCharges(ctx, in.Parameters, out.Result)
	}
	r.mu.Lock()
	r.requests = append(r.requests, req)
	r.mu.Unlock()
	return out, md, err
}

// operation is the API operation of an input: *dynamodb.GetItemInput → GetItem.
func operation(params any) string {
	t := reflect.TypeOf(params)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	name := t.Name()
	if len(name) > len("Input") {
		return name[:len(name)-len("Input")]
	}
	return name
}

// image reads an item as it is now, strongly consistent, unrecorded.
func (r *Recorder) image(ctx context.Context, table string, key map[string]types.AttributeValue) map[string]types.AttributeValue {
	out, err := r.shadow.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: key, ConsistentRead: aws.Bool(true)})
	if err != nil {
		panic(fmt.Sprintf("shadow read of %s: %v", table, err))
	}
	return out.Item
}

// itemWrite is one item a write request touches.
type itemWrite struct {
	table         string
	key           map[string]types.AttributeValue
	put           map[string]types.AttributeValue // the new item of a Put
	transactional bool                            // part of TransactWriteItems: 2× units
	check         bool                            // a ConditionCheck: billed as a write of the item, changes nothing
	before        map[string]types.AttributeValue
}

func writesOf(params any, tables map[string]tableShape) []itemWrite {
	keyOf := func(table string, item map[string]types.AttributeValue) map[string]types.AttributeValue {
		key := map[string]types.AttributeValue{}
		for _, k := range tables[table].keys {
			key[k] = item[k]
		}
		return key
	}
	switch p := params.(type) {
	case *dynamodb.PutItemInput:
		t := aws.ToString(p.TableName)
		return []itemWrite{{table: t, key: keyOf(t, p.Item), put: p.Item}}
	case *dynamodb.UpdateItemInput:
		return []itemWrite{{table: aws.ToString(p.TableName), key: p.Key}}
	case *dynamodb.DeleteItemInput:
		return []itemWrite{{table: aws.ToString(p.TableName), key: p.Key}}
	case *dynamodb.BatchWriteItemInput:
		var ws []itemWrite
		for t, reqs := range p.RequestItems {
			for _, w := range reqs {
				switch {
				case w.PutRequest != nil:
					ws = append(ws, itemWrite{table: t, key: keyOf(t, w.PutRequest.Item), put: w.PutRequest.Item})
				case w.DeleteRequest != nil:
					ws = append(ws, itemWrite{table: t, key: w.DeleteRequest.Key})
				}
			}
		}
		return ws
	case *dynamodb.TransactWriteItemsInput:
		var ws []itemWrite
		for _, it := range p.TransactItems {
			switch {
			case it.Put != nil:
				t := aws.ToString(it.Put.TableName)
				ws = append(ws, itemWrite{table: t, key: keyOf(t, it.Put.Item), put: it.Put.Item, transactional: true})
			case it.Update != nil:
				ws = append(ws, itemWrite{table: aws.ToString(it.Update.TableName), key: it.Update.Key, transactional: true})
			case it.Delete != nil:
				ws = append(ws, itemWrite{table: aws.ToString(it.Delete.TableName), key: it.Delete.Key, transactional: true})
			case it.ConditionCheck != nil:
				ws = append(ws, itemWrite{table: aws.ToString(it.ConditionCheck.TableName), key: it.ConditionCheck.Key, transactional: true, check: true})
			}
		}
		return ws
	}
	return nil
}

// readCharges bills a read on the items it read: GetItem and each
// BatchGetItem item rounded up to 4 KB apiece; Query on the sum of the
// items it evaluated, rounded up once; transactional reads 2×; eventually
// consistent reads (every global index query) half.
func (r *Recorder) readCharges(ctx context.Context, params, result any) []charge {
	switch p := params.(type) {
	case *dynamodb.GetItemInput:
		item := result.(*dynamodb.GetItemOutput).Item
		if p.ProjectionExpression != nil { // billed on the whole item
			item = r.image(ctx, aws.ToString(p.TableName), p.Key)
		}
		bytes := itemSize(item)
		return []charge{{table: aws.ToString(p.TableName), units: readUnits(bytes, aws.ToBool(p.ConsistentRead)), bytes: bytes}}
	case *dynamodb.QueryInput:
		items := result.(*dynamodb.QueryOutput).Items
		if p.FilterExpression != nil || p.ProjectionExpression != nil || p.Select != "" {
			items = r.evaluated(ctx, p)
		}
		bytes := 0
		for _, it := range items {
			bytes += itemSize(it)
		}
		consistent := aws.ToBool(p.ConsistentRead) && p.IndexName == nil
		return []charge{{table: aws.ToString(p.TableName), index: aws.ToString(p.IndexName), units: readUnits(bytes, consistent), bytes: bytes}}
	case *dynamodb.BatchGetItemInput:
		out := result.(*dynamodb.BatchGetItemOutput)
		var cs []charge
		for t, ka := range p.RequestItems {
			got := out.Responses[t]
			missing := len(ka.Keys) - len(got) - len(out.UnprocessedKeys[t].Keys)
			for _, it := range got {
				cs = append(cs, charge{table: t, units: readUnits(itemSize(it), aws.ToBool(ka.ConsistentRead)), bytes: itemSize(it)})
			}
			for range max(missing, 0) {
				cs = append(cs, charge{table: t, units: readUnits(0, aws.ToBool(ka.ConsistentRead))})
			}
		}
		return cs
	case *dynamodb.TransactGetItemsInput:
		out := result.(*dynamodb.TransactGetItemsOutput)
		var cs []charge
		for i, it := range p.TransactItems {
			var item map[string]types.AttributeValue
			if i < len(out.Responses) {
				item = out.Responses[i].Item
			}
			cs = append(cs, charge{table: aws.ToString(it.Get.TableName), units: 2 * readUnits(itemSize(item), true), bytes: itemSize(item)})
		}
		return cs
	case *dynamodb.ScanInput:
		bytes := 0
		for _, it := range result.(*dynamodb.ScanOutput).Items {
			bytes += itemSize(it)
		}
		return []charge{{table: aws.ToString(p.TableName), index: aws.ToString(p.IndexName), units: readUnits(bytes, aws.ToBool(p.ConsistentRead)), bytes: bytes}}
	}
	return nil
}

var placeholder = regexp.MustCompile(`[#:][A-Za-z0-9_]+`)

// evaluated runs a query again without its filter and projection (same key
// condition, Limit and start key), so it returns every item the original
// evaluated, whole: what DynamoDB bills a query on.
func (r *Recorder) evaluated(ctx context.Context, p *dynamodb.QueryInput) []map[string]types.AttributeValue {
	q := *p
	q.FilterExpression, q.ProjectionExpression, q.Select = nil, nil, ""
	used := map[string]bool{}
	for _, m := range placeholder.FindAllString(aws.ToString(q.KeyConditionExpression), -1) {
		used[m] = true
	}
	q.ExpressionAttributeNames = maps.Clone(q.ExpressionAttributeNames)
	maps.DeleteFunc(q.ExpressionAttributeNames, func(k string, _ string) bool { return !used[k] })
	q.ExpressionAttributeValues = maps.Clone(q.ExpressionAttributeValues)
	maps.DeleteFunc(q.ExpressionAttributeValues, func(k string, _ types.AttributeValue) bool { return !used[k] })
	if len(q.ExpressionAttributeNames) == 0 {
		q.ExpressionAttributeNames = nil
	}
	if len(q.ExpressionAttributeValues) == 0 {
		q.ExpressionAttributeValues = nil
	}
	out, err := r.shadow.Query(ctx, &q)
	if err != nil {
		panic(fmt.Sprintf("shadow query of %s: %v", aws.ToString(q.TableName), err))
	}
	return out.Items
}
