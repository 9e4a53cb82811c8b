package bus

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/useprickle/prickle/shared/domain/event"
)

// sample reads one of events/*.json, the samples `sam local invoke -e` uses.
func sample(t *testing.T, name string) events.CloudWatchEvent {
	t.Helper()
	b, err := os.ReadFile("../../../events/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var cw events.CloudWatchEvent
	if err := json.Unmarshal(b, &cw); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return cw
}

func TestSampleEventsDecodeAndMatchTheirRules(t *testing.T) {
	rules := templateRules(t)
	for name, typ := range map[string]event.Type{
		"task-routed.json": event.TaskRouted, "step-decided.json": event.StepDecided,
		"result-returned.json": event.ResultReturned, "task-completed.json": event.TaskCompleted,
	} {
		t.Run(name, func(t *testing.T) {
			var got event.Event
			h := FromCloudWatch(func(_ context.Context, e event.Event) error { got = e; return nil })
			if err := h(context.Background(), sample(t, name)); err != nil {
				t.Fatal(err)
			}
			if got.Type != typ || got.ID == "" || got.TaskID == "" || got.Project == "" {
				t.Errorf("decoded %+v", got)
			}
			matched := false
			for _, r := range rules {
				for _, dt := range r.DetailTypes {
					matched = matched || dt == string(typ)
				}
			}
			if !matched {
				t.Errorf("no rule of template.yaml matches %s", typ)
			}
		})
	}
}

func TestDecodeRefusesMismatchedEnvelopes(t *testing.T) {
	cw := sample(t, "task-routed.json")
	cw.DetailType = "Task Completed"
	if _, err := Decode(cw); err == nil || !strings.Contains(err.Error(), "disagrees") {
		t.Errorf("err = %v, want a detail-type mismatch", err)
	}
	cw = sample(t, "task-routed.json")
	cw.Source = "aws.events"
	if _, err := Decode(cw); err == nil {
		t.Error("an event from another source was accepted")
	}
	cw = sample(t, "task-routed.json")
	cw.Detail = json.RawMessage(`"nope"`)
	if _, err := Decode(cw); err == nil {
		t.Error("a detail that is not an event was accepted")
	}
}
