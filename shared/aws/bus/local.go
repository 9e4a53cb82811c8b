package bus

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/useprickle/prickle/shared/domain/event"
)

// Rule routes events of some detail-types to one function, as an
// EventBridgeRule of template.yaml does; shared/aws/cfn reads them from the
// template (cfn.Rule converts field for field).
type Rule struct {
	Function    string
	DetailTypes []string
}

// DeadLetter is a delivery whose handler failed: what the cloud's
// dead-letter queue would hold after EventBridge's retries.
type DeadLetter struct {
	At     time.Time   `json:"at"`
	Target string      `json:"target"`
	Event  event.Event `json:"event"`
	Error  string      `json:"error"`
}

// Local is the local stack's bus: Publish delivers each event synchronously,
// in order, to the handlers whose rules match its detail-type, so a tool call
// returns after its wake-ups and notifications happened, as a laptop user expects.
type Local struct {
	routes map[event.Type][]target
	mu     sync.Mutex
	dead   []DeadLetter
}

type target struct {
	name string
	h    event.Handler
}

var _ event.Publisher = (*Local)(nil)

// NewLocal builds the bus from the template's rules and a handler per
// function logical id. A rule whose function has no handler, or a handler no
// rule names, is an error, so the template and the local wiring cannot drift.
func NewLocal(rules []Rule, handlers map[string]event.Handler) (*Local, error) {
	l := &Local{routes: map[event.Type][]target{}}
	used := map[string]bool{}
	var missing []string
	for _, r := range rules {
		h, ok := handlers[r.Function]
		if !ok || h == nil {
			if !slices.Contains(missing, r.Function) {
				missing = append(missing, r.Function)
			}
			continue
		}
		used[r.Function] = true
		for _, dt := range r.DetailTypes {
			typ := event.Type(dt)
			if !slices.ContainsFunc(l.routes[typ], func(t target) bool { return t.name == r.Function }) {
				l.routes[typ] = append(l.routes[typ], target{name: r.Function, h: h})
			}
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("local bus: template.yaml routes events to %s, which have no local handler", strings.Join(missing, ", "))
	}
	var unused []string
	for name := range handlers {
		if !used[name] {
			unused = append(unused, name)
		}
	}
	if len(unused) > 0 {
		sort.Strings(unused)
		return nil, fmt.Errorf("local bus: handlers for %s, which no rule of template.yaml names", strings.Join(unused, ", "))
	}
	return l, nil
}

// Targets lists the functions an event type reaches, in rule order.
func (l *Local) Targets(t event.Type) []string {
	var out []string
	for _, tg := range l.routes[t] {
		out = append(out, tg.name)
	}
	return out
}

type queueKey struct{}

// queue holds events published by handlers while an outer Publish delivers,
// so they are delivered after the current event, in publish order.
type queue struct{ events []event.Event }

// Publish delivers the events before it returns. A handler's failure does
// not fail the publish (EventBridge accepted the event; its target failed):
// it is logged and kept in DeadLetters. Events a handler publishes while
// being delivered are queued behind the current ones, in order.
func (l *Local) Publish(ctx context.Context, events ...event.Event) error {
	if q, ok := ctx.Value(queueKey{}).(*queue); ok {
		q.events = append(q.events, events...)
		return nil
	}
	q := &queue{events: slices.Clone(events)}
	inner := context.WithValue(ctx, queueKey{}, q)
	for len(q.events) > 0 {
		e := q.events[0]
		q.events = q.events[1:]
		for _, tg := range l.routes[e.Type] {
			if err := tg.h(inner, e); err != nil {
				slog.ErrorContext(ctx, "local delivery failed; kept as a dead letter", "target", tg.name, "event", e.ID, "error", err.Error())
				l.mu.Lock()
				l.dead = append(l.dead, DeadLetter{At: time.Now().UTC(), Target: tg.name, Event: e, Error: err.Error()})
				l.mu.Unlock()
			}
		}
	}
	return nil
}

// DeadLetters returns the failed deliveries so far, oldest first.
func (l *Local) DeadLetters() []DeadLetter {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.dead)
}

// Recorder is a Publisher that keeps what it is given: for tests and for
// wiring where a function's events are only observed.
type Recorder struct {
	mu     sync.Mutex
	events []event.Event
}

var _ event.Publisher = (*Recorder)(nil)

// Publish records the events.
func (r *Recorder) Publish(_ context.Context, events ...event.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, events...)
	return nil
}

// Events returns what was published so far, in order.
func (r *Recorder) Events() []event.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}
