package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/useprickle/prickle/shared/aws/cfn"
	"github.com/useprickle/prickle/shared/aws/store/storetest"
)

// streamHandler is what a stream function's Lambda handler is.
type streamHandler func(context.Context, events.DynamoDBEvent) error

// streamPollEvery is how often the local stack reads the streams: often
// enough that a republished event follows its move within a second, rarely
// enough that an idle stack barely loads the emulator.
const streamPollEvery = 500 * time.Millisecond

// streamGrace is how old a record must be before it is handed over: the
// writer publishes its events synchronously right after its write, so a copy
// handed over while that delivery runs would only meet its live claim.
const streamGrace = 2 * time.Second

// streamTries is how many times a failing batch is handed to its function
// before it is logged as dead, as the template's MaximumRetryAttempts bounds it in the cloud.
const streamTries = 3

// followStreams reads the stream of every table template.yaml gives a
// function a DynamoDB event on, and hands the new records to that function's
// handler, as Lambda's event source mappings do in the cloud. It starts from
// now: records of an earlier run were handled by that run. It returns when
// ctx ends.
func (e *environment) followStreams(ctx context.Context, log *slog.Logger, handlers map[string]streamHandler) error {
	type follower struct {
		src     cfn.StreamSource
		reader  *storetest.StreamReader
		handle  streamHandler
		waiting []events.DynamoDBEventRecord // read, younger than streamGrace
	}
	var fs []follower
	for _, src := range e.streams {
		h, ok := handlers[src.Function]
		if !ok {
			return fmt.Errorf("template.yaml gives %s the stream of %s, and the local stack has no handler for it", src.Function, src.Table)
		}
		fs = append(fs, follower{src: src, reader: storetest.NewStreamReaderFromNow(e.client, e.streamsClient, e.tables[src.Table]), handle: h})
	}
	for _, f := range fs {
		// The first read places every reader at the stream's end.
		if _, err := f.reader.Next(ctx); err != nil {
			return fmt.Errorf("follow the stream of %s: %w", f.src.Table, err)
		}
	}
	go func() {
		tick := time.NewTicker(streamPollEvery)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			for i := range fs {
				f := &fs[i]
				batch, err := f.reader.Next(ctx)
				if err != nil {
					if ctx.Err() == nil {
						log.Error("read stream", "table", f.src.Table, "error", err.Error())
					}
					continue
				}
				f.waiting = append(f.waiting, batch.Records...)
				batch.Records, f.waiting = ripe(f.waiting, time.Now().Add(-streamGrace))
				if len(batch.Records) == 0 {
					continue
				}
				for try := 1; ; try++ {
					err := f.handle(ctx, batch)
					if err == nil {
						break
					}
					if try == streamTries || ctx.Err() != nil {
						log.Error("stream batch failed; dropped", "function", f.src.Function, "records", len(batch.Records), "tries", try, "error", err.Error())
						break
					}
				}
			}
		}
	}()
	return nil
}

// ripe splits records into those written before cutoff and the rest, keeping order.
func ripe(records []events.DynamoDBEventRecord, cutoff time.Time) (ready, waiting []events.DynamoDBEventRecord) {
	for i, r := range records {
		if r.Change.ApproximateCreationDateTime.After(cutoff) {
			return records[:i], records[i:]
		}
	}
	return records, nil
}
