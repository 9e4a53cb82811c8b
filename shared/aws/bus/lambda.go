package bus

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-lambda-go/events"

	"github.com/useprickle/prickle/shared/domain/event"
)

// FromCloudWatch adapts an event handler to the payload EventBridge gives a
// Lambda target (detail = the event.Event JSON), so functions stay wiring
// only. A detail that does not decode, or whose type disagrees with the
// envelope's detail-type, is an error: it ends in the dead-letter queue
// rather than being dropped.
func FromCloudWatch(h event.Handler) func(context.Context, events.CloudWatchEvent) error {
	return func(ctx context.Context, cw events.CloudWatchEvent) error {
		e, err := Decode(cw)
		if err != nil {
			return err
		}
		return h(ctx, e)
	}
}

// Decode reads the Prickle event out of an EventBridge envelope.
func Decode(cw events.CloudWatchEvent) (event.Event, error) {
	if cw.Source != event.Source {
		return event.Event{}, fmt.Errorf("EventBridge event %s: source %q is not %q", cw.ID, cw.Source, event.Source)
	}
	var e event.Event
	if err := json.Unmarshal(cw.Detail, &e); err != nil {
		return event.Event{}, fmt.Errorf("EventBridge event %s: decode detail: %w", cw.ID, err)
	}
	if string(e.Type) != cw.DetailType {
		return event.Event{}, fmt.Errorf("EventBridge event %s: detail type %q disagrees with detail-type %q", cw.ID, e.Type, cw.DetailType)
	}
	if e.ID == "" {
		return event.Event{}, fmt.Errorf("EventBridge event %s: detail has no id", cw.ID)
	}
	return e, nil
}
