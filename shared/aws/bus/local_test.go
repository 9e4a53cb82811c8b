package bus

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/useprickle/prickle/shared/aws/cfn"
	"github.com/useprickle/prickle/shared/domain/event"
)

// templateRules reads the real template's rules, as the local stack does.
func templateRules(t *testing.T) []Rule {
	t.Helper()
	tpl, err := cfn.LoadTemplate("../../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rules, err := tpl.EventRules(nil)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]Rule, len(rules))
	for i, r := range rules {
		out[i] = Rule{Function: r.Function, DetailTypes: r.DetailTypes}
	}
	return out
}

type trace struct{ lines []string }

func (tr *trace) handler(name string) event.Handler {
	return func(_ context.Context, e event.Event) error {
		tr.lines = append(tr.lines, name+" "+e.ID)
		return nil
	}
}

func TestLocalRoutesAsTheTemplateSays(t *testing.T) {
	tr := &trace{}
	l, err := NewLocal(templateRules(t), map[string]event.Handler{
		"NotifyFunction": tr.handler("notify"), "WakeupFunction": tr.handler("wake"), "RouteFunction": tr.handler("route"),
	})
	if err != nil {
		t.Fatal(err)
	}
	evs := []event.Event{
		{ID: "1", Type: event.StepDecided}, {ID: "2", Type: event.TaskRouted}, {ID: "3", Type: event.TaskCompleted},
		{ID: "4", Type: event.StepRequested}, {ID: "5", Type: event.ResultReturned},
	}
	if err := l.Publish(context.Background(), evs...); err != nil {
		t.Fatal(err)
	}
	want := "notify 1|wake 1|wake 2|route 3|notify 4|wake 5"
	if got := strings.Join(tr.lines, "|"); got != want {
		t.Errorf("deliveries = %s\nwant         %s", got, want)
	}
	if got := fmt.Sprint(l.Targets(event.StepDecided)); got != "[NotifyFunction WakeupFunction]" {
		t.Errorf("Step Decided targets = %s", got)
	}
}

func TestLocalRefusesDriftFromTheTemplate(t *testing.T) {
	noop := func(context.Context, event.Event) error { return nil }
	_, err := NewLocal(templateRules(t), map[string]event.Handler{"NotifyFunction": noop, "WakeupFunction": noop})
	if err == nil || !strings.Contains(err.Error(), "RouteFunction") {
		t.Errorf("missing handler: err = %v, want one naming RouteFunction", err)
	}
	_, err = NewLocal(templateRules(t), map[string]event.Handler{"NotifyFunction": noop, "WakeupFunction": noop, "RouteFunction": noop, "Typo": noop})
	if err == nil || !strings.Contains(err.Error(), "Typo") {
		t.Errorf("unknown handler: err = %v, want one naming Typo", err)
	}
}

func TestLocalDeliversNestedEventsAfterTheCurrentOne(t *testing.T) {
	tr := &trace{}
	var l *Local
	rules := []Rule{{Function: "A", DetailTypes: []string{"Task Completed"}}, {Function: "B", DetailTypes: []string{"Task Completed", "Task Routed"}}}
	var err error
	l, err = NewLocal(rules, map[string]event.Handler{
		"A": func(ctx context.Context, e event.Event) error {
			tr.lines = append(tr.lines, "A "+e.ID)
			return l.Publish(ctx, event.Event{ID: "routed", Type: event.TaskRouted})
		},
		"B": tr.handler("B"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Publish(context.Background(), event.Event{ID: "done", Type: event.TaskCompleted}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(tr.lines, "|"); got != "A done|B done|B routed" {
		t.Errorf("deliveries = %s, want every target of the first event before the event it caused", got)
	}
}

func TestLocalKeepsFailedDeliveriesAsDeadLetters(t *testing.T) {
	tr := &trace{}
	l, err := NewLocal([]Rule{{Function: "A", DetailTypes: []string{"Task Routed"}}, {Function: "B", DetailTypes: []string{"Task Routed"}}},
		map[string]event.Handler{
			"A": func(context.Context, event.Event) error { return errors.New("wake URL down") },
			"B": tr.handler("B"),
		})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Publish(context.Background(), event.Event{ID: "r1", Type: event.TaskRouted}); err != nil {
		t.Fatalf("publish failed because a target did: %v", err)
	}
	dl := l.DeadLetters()
	if len(dl) != 1 || dl[0].Target != "A" || dl[0].Event.ID != "r1" || !strings.Contains(dl[0].Error, "down") {
		t.Errorf("dead letters = %+v", dl)
	}
	if len(tr.lines) != 1 {
		t.Errorf("the other target got %v, want its delivery", tr.lines)
	}
}

func TestRecorderKeepsOrder(t *testing.T) {
	var r Recorder
	_ = r.Publish(context.Background(), event.Event{ID: "a"}, event.Event{ID: "b"})
	_ = r.Publish(context.Background(), event.Event{ID: "c"})
	if got := fmt.Sprintf("%d %s", len(r.Events()), r.Events()[2].ID); got != "3 c" {
		t.Errorf("recorded %s", got)
	}
}
