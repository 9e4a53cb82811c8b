//go:build integration

package bus_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/useprickle/prickle/shared/aws/bus"
	"github.com/useprickle/prickle/shared/aws/store/storetest"
	"github.com/useprickle/prickle/shared/domain/event"
	"github.com/useprickle/prickle/shared/domain/step"
)

// faultyAPI wraps the real client and injects one fault into the first PutEvents call.
type faultyAPI struct {
	real  bus.PutEventsAPI
	fault string // before: fail without sending; after: send, then fail; entry: answer FailedEntryCount 1
	calls int
}

func (f *faultyAPI) PutEvents(ctx context.Context, in *eventbridge.PutEventsInput, opts ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error) {
	f.calls++
	if f.calls > 1 {
		return f.real.PutEvents(ctx, in, opts...)
	}
	switch f.fault {
	case "before":
		return nil, errors.New("injected: connection reset before the request was sent")
	case "after":
		if _, err := f.real.PutEvents(ctx, in, opts...); err != nil {
			return nil, err
		}
		return nil, errors.New("injected: timeout after EventBridge accepted the request")
	case "entry":
		// EventBridge takes every entry but the first, which fails.
		out := &eventbridge.PutEventsOutput{Entries: make([]ebtypes.PutEventsResultEntry, len(in.Entries)), FailedEntryCount: 1}
		if len(in.Entries) > 1 {
			rest, err := f.real.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: in.Entries[1:]}, opts...)
			if err != nil {
				return nil, err
			}
			copy(out.Entries[1:], rest.Entries)
		}
		out.Entries[0] = ebtypes.PutEventsResultEntry{ErrorCode: aws.String("InternalFailure"), ErrorMessage: aws.String("injected")}
		return out, nil
	}
	return f.real.PutEvents(ctx, in, opts...)
}

// clients builds EventBridge and SQS clients on the emulator.
func clients(t *testing.T, endpoint string) (*eventbridge.Client, *sqs.Client) {
	t.Helper()
	eb := bus.NewClient(endpoint)
	cfg, err := config.LoadDefaultConfig(context.Background(), config.WithRegion("us-east-1"),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("local", "local", "")))
	if err != nil {
		t.Fatal(err)
	}
	q := sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = aws.String(endpoint) })
	return eb, q
}

// ruleToQueue makes a rule on the bus, as template.yaml's, that sends the
// detail-types to a new SQS queue standing in for the target function.
func ruleToQueue(t *testing.T, eb *eventbridge.Client, q *sqs.Client, busName, name string, types ...event.Type) string {
	t.Helper()
	ctx := context.Background()
	created, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(busName + "-" + name)})
	if err != nil {
		t.Fatal(err)
	}
	attrs, err := q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: created.QueueUrl, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		t.Fatal(err)
	}
	pattern, _ := json.Marshal(map[string]any{"source": []string{event.Source}, "detail-type": types})
	if _, err := eb.PutRule(ctx, &eventbridge.PutRuleInput{Name: aws.String(name), EventBusName: aws.String(busName), EventPattern: aws.String(string(pattern))}); err != nil {
		t.Fatal(err)
	}
	if _, err := eb.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: aws.String(name), EventBusName: aws.String(busName), Targets: []ebtypes.Target{
		{Id: aws.String("queue"), Arn: aws.String(attrs.Attributes[string(sqstypes.QueueAttributeNameQueueArn)])},
	}}); err != nil {
		t.Fatal(err)
	}
	return aws.ToString(created.QueueUrl)
}

// drain returns every message of a queue as the EventBridge event Lambda would get.
func drain(t *testing.T, q *sqs.Client, url string) []events.CloudWatchEvent {
	t.Helper()
	var out []events.CloudWatchEvent
	for {
		got, err := q.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Messages) == 0 {
			return out
		}
		for _, m := range got.Messages {
			var cw events.CloudWatchEvent
			if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &cw); err != nil {
				t.Fatalf("message %s: %v", aws.ToString(m.Body), err)
			}
			out = append(out, cw)
			if _, err := q.DeleteMessage(context.Background(), &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

type handled struct {
	mu   sync.Mutex
	runs map[string]int
}

func (h *handled) handler(target string) event.Handler {
	return func(_ context.Context, e event.Event) error {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.runs[target+" "+e.ID]++
		return nil
	}
}

// TestDecisionDeliveredExactlyOnceDespiteAFailedPutEvents is acceptance 5:
// with PutEvents failing once, the owner's decision still reaches each
// target (wake and notify) exactly once. EventBridge itself may carry it
// twice (the ambiguous failure); Once over the store's dedup makes the
// targets act once.
func TestDecisionDeliveredExactlyOnceDespiteAFailedPutEvents(t *testing.T) {
	endpoint := storetest.Endpoint(t)
	for _, fault := range []string{"before", "after", "entry"} {
		t.Run(fault, func(t *testing.T) {
			ctx := context.Background()
			st := storetest.New(t).Store
			eb, q := clients(t, endpoint)
			busName := storetest.UniqueName(t)
			if _, err := eb.CreateEventBus(ctx, &eventbridge.CreateEventBusInput{Name: aws.String(busName)}); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				_, _ = eb.DeleteEventBus(context.Background(), &eventbridge.DeleteEventBusInput{Name: aws.String(busName)})
			})
			queues := map[string]string{
				"WakeupFunction": ruleToQueue(t, eb, q, busName, "wake", event.TaskRouted, event.StepDecided),
				"NotifyFunction": ruleToQueue(t, eb, q, busName, "notify", event.StepRequested, event.StepDecided),
			}

			api := &faultyAPI{real: eb, fault: fault}
			pub := bus.NewEventBridge(api, busName)
			pub.Sleep = func(context.Context, time.Duration) error { return nil }
			at := time.Date(2026, 11, 29, 10, 30, 0, 0, time.UTC)
			decided := event.ForStep(event.StepDecided, step.Step{ID: "stp_1", TaskID: "tsk_1", Project: "website-v2", Agent: "bo/codex", RunID: "run_1", Status: step.Approved}, "owner:bo", at)
			routed := event.Event{ID: "Task Routed:tsk_2:1", Type: event.TaskRouted, TaskID: "tsk_2", Project: "website-v2", At: at}
			if err := pub.Publish(ctx, decided, routed); err != nil {
				t.Fatalf("publish: %v", err)
			}
			if api.calls != 2 {
				t.Errorf("%d PutEvents calls, want 2 (the fault, then the retry)", api.calls)
			}

			h := &handled{runs: map[string]int{}}
			carried := map[string]int{}
			for target, url := range queues {
				deliver := bus.FromCloudWatch(bus.Once(target, st, h.handler(target)))
				for _, cw := range drain(t, q, url) {
					carried[target]++
					if err := deliver(ctx, cw); err != nil {
						t.Fatalf("%s: %v", target, err)
					}
				}
			}
			want := map[string]int{"WakeupFunction " + decided.ID: 1, "NotifyFunction " + decided.ID: 1, "WakeupFunction " + routed.ID: 1}
			for k, n := range want {
				if h.runs[k] != n {
					t.Errorf("%s handled %d times, want %d", k, h.runs[k], n)
				}
			}
			if len(h.runs) != len(want) {
				t.Errorf("handled %v, want exactly %v", h.runs, want)
			}
			t.Logf("fault %q: the bus carried %v messages; the targets acted %v", fault, carried, h.runs)
			if fault == "after" && carried["WakeupFunction"] < 3 {
				t.Errorf("the ambiguous failure should have made EventBridge carry duplicates (wake got %d), or this test proves nothing", carried["WakeupFunction"])
			}
		})
	}
}
