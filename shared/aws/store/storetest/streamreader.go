package storetest

import (
	"context"
	"fmt"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/useprickle/prickle/shared/aws/awsenv"
)

// StreamReader follows one table's stream from its start and hands out its
// records as a Lambda DynamoDB event carries them, so the local stack (and
// the tests) feed the stream functions exactly what the cloud would: where
// Lambda polls the stream for them, this does.
type StreamReader struct {
	db      *dynamodb.Client
	streams *dynamodbstreams.Client
	table   string
	arn     string
	// start is where the shards known at the first read are read from; a
	// shard that appears later is read from its first record.
	start streamtypes.ShardIteratorType
	// iterators holds the next iterator of every shard seen; "" once a shard is closed and read.
	iterators map[string]string
}

// NewStreamsClient builds a DynamoDB Streams client like store.NewFunctionClient.
func NewStreamsClient(endpoint string) *dynamodbstreams.Client {
	return dynamodbstreams.NewFromConfig(awsenv.Config(), func(o *dynamodbstreams.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	})
}

// NewStreamReader reads the stream of table from its oldest record.
func NewStreamReader(db *dynamodb.Client, streams *dynamodbstreams.Client, table string) *StreamReader {
	return &StreamReader{db: db, streams: streams, table: table, start: streamtypes.ShardIteratorTypeTrimHorizon, iterators: map[string]string{}}
}

// NewStreamReaderFromNow reads only what the stream of table gets from the
// first call on: for a stack whose earlier records were handled by an
// earlier run of itself.
func NewStreamReaderFromNow(db *dynamodb.Client, streams *dynamodbstreams.Client, table string) *StreamReader {
	r := NewStreamReader(db, streams, table)
	r.start = streamtypes.ShardIteratorTypeLatest
	return r
}

// Next returns the records written since the last call, oldest first per
// shard (an event with no records when nothing is new).
func (r *StreamReader) Next(ctx context.Context) (events.DynamoDBEvent, error) {
	if err := r.discover(ctx); err != nil {
		return events.DynamoDBEvent{}, err
	}
	var out events.DynamoDBEvent
	for shard, it := range r.iterators {
		for it != "" {
			page, err := r.streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: aws.String(it)})
			if err != nil {
				return out, fmt.Errorf("stream of %s: records of shard %s: %w", r.table, shard, err)
			}
			for _, rec := range page.Records {
				out.Records = append(out.Records, lambdaRecord(r.arn, rec))
			}
			next := aws.ToString(page.NextShardIterator)
			if len(page.Records) == 0 || next == it {
				r.iterators[shard] = next
				break
			}
			it = next
			r.iterators[shard] = next
		}
	}
	return out, nil
}

// discover finds the table's stream and starts an iterator on every new shard.
func (r *StreamReader) discover(ctx context.Context) error {
	if r.arn == "" {
		t, err := r.db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(r.table)})
		if err != nil {
			return fmt.Errorf("stream of %s: %w", r.table, err)
		}
		if t.Table.LatestStreamArn == nil {
			return fmt.Errorf("stream of %s: the table has no stream", r.table)
		}
		r.arn = aws.ToString(t.Table.LatestStreamArn)
	}
	d, err := r.streams.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(r.arn)})
	if err != nil {
		return fmt.Errorf("stream of %s: describe: %w", r.table, err)
	}
	start := r.start
	r.start = streamtypes.ShardIteratorTypeTrimHorizon
	for _, s := range d.StreamDescription.Shards {
		id := aws.ToString(s.ShardId)
		if _, known := r.iterators[id]; known {
			continue
		}
		it, err := r.streams.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{
			StreamArn: aws.String(r.arn), ShardId: s.ShardId, ShardIteratorType: start,
		})
		if err != nil {
			return fmt.Errorf("stream of %s: iterator of shard %s: %w", r.table, id, err)
		}
		r.iterators[id] = aws.ToString(it.ShardIterator)
	}
	return nil
}

// lambdaRecord is a stream record in the shape of a Lambda event's record.
func lambdaRecord(arn string, rec streamtypes.Record) events.DynamoDBEventRecord {
	out := events.DynamoDBEventRecord{
		EventID: aws.ToString(rec.EventID), EventName: string(rec.EventName),
		EventSource: "aws:dynamodb", EventVersion: aws.ToString(rec.EventVersion),
		AWSRegion: aws.ToString(rec.AwsRegion), EventSourceArn: arn,
	}
	if rec.UserIdentity != nil {
		out.UserIdentity = &events.DynamoDBUserIdentity{Type: aws.ToString(rec.UserIdentity.Type), PrincipalID: aws.ToString(rec.UserIdentity.PrincipalId)}
	}
	if c := rec.Dynamodb; c != nil {
		out.Change = events.DynamoDBStreamRecord{
			Keys: lambdaImage(c.Keys), NewImage: lambdaImage(c.NewImage), OldImage: lambdaImage(c.OldImage),
			SequenceNumber: aws.ToString(c.SequenceNumber), StreamViewType: string(c.StreamViewType),
			SizeBytes: aws.ToInt64(c.SizeBytes),
		}
		if c.ApproximateCreationDateTime != nil {
			out.Change.ApproximateCreationDateTime = events.SecondsEpochTime{Time: *c.ApproximateCreationDateTime}
		}
	}
	return out
}

func lambdaImage(image map[string]streamtypes.AttributeValue) map[string]events.DynamoDBAttributeValue {
	if image == nil {
		return nil
	}
	out := make(map[string]events.DynamoDBAttributeValue, len(image))
	for k, v := range image {
		out[k] = lambdaValue(v)
	}
	return out
}

// lambdaValue converts one stream attribute value to the Lambda event's.
// (One case per kind of value, as the store's fromStreamValue the other way: the SDKs
// share no type and convert none of each other's.)
func lambdaValue(v streamtypes.AttributeValue) events.DynamoDBAttributeValue {
	switch v := v.(type) {
	case *streamtypes.AttributeValueMemberS:
		return events.NewStringAttribute(v.Value)
	case *streamtypes.AttributeValueMemberN:
		return events.NewNumberAttribute(v.Value)
	case *streamtypes.AttributeValueMemberBOOL:
		return events.NewBooleanAttribute(v.Value)
	case *streamtypes.AttributeValueMemberB:
		return events.NewBinaryAttribute(v.Value)
	case *streamtypes.AttributeValueMemberSS:
		return events.NewStringSetAttribute(v.Value)
	case *streamtypes.AttributeValueMemberNS:
		return events.NewNumberSetAttribute(v.Value)
	case *streamtypes.AttributeValueMemberBS:
		return events.NewBinarySetAttribute(v.Value)
	case *streamtypes.AttributeValueMemberL:
		list := make([]events.DynamoDBAttributeValue, len(v.Value))
		for i, e := range v.Value {
			list[i] = lambdaValue(e)
		}
		return events.NewListAttribute(list)
	case *streamtypes.AttributeValueMemberM:
		return events.NewMapAttribute(lambdaImage(v.Value))
	}
	return events.NewNullAttribute()
}
