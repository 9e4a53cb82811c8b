package notify_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/useprickle/prickle/shared/domain/event"
	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/owners/notify"
)

func TestPrettyInputIndentsAsJSONIndent(t *testing.T) {
	for _, in := range []string{
		`{}`, `[]`, `{"a":1}`, `{"a":[1,2,{"b":null}],"c":{},"d":[ ],"e":"x, y: {z}"}`,
		`{"command":"git push origin main && echo <done>","q":"say \"hi\" \\ [ok]"}`,
		`{"deep":[[[[{"x":[true,false]}]]]]}`, ` { "spaced" : [ 1 , 2 ] } `,
	} {
		var want bytes.Buffer
		if err := json.Indent(&want, []byte(in), "", "  "); err != nil {
			t.Fatal(err)
		}
		if got := notify.PrettyInput(json.RawMessage(in), notify.InputPageMax); got != strings.TrimSpace(want.String()) {
			t.Errorf("PrettyInput(%s) =\n%s\nwant\n%s", in, got, want.String())
		}
	}
}

// deepInput is {"a": [[…]]} nested depth levels: what request_step accepted before its bounds.
func deepInput(depth int) json.RawMessage {
	return json.RawMessage(`{"a":` + strings.Repeat("[", depth-1) + strings.Repeat("]", depth-1) + `}`)
}

// TestPrettyInputIsLinearAndClipped: a stored input 1000 or 10,000 levels
// deep (accepted before the bounds) used to render as 2 MB and 200 MB; now
// the indentation stops growing at 16 levels, the rendering stops at its
// maximum and says it was clipped and how big the whole input is.
func TestPrettyInputIsLinearAndClipped(t *testing.T) {
	for _, depth := range []int{1000, 10_000} {
		in := deepInput(depth)
		start := time.Now()
		got := notify.PrettyInput(in, notify.InputPageMax)
		took := time.Since(start)
		t.Logf("depth %d, %d bytes of input: %d bytes rendered in %v", depth, len(in), len(got), took)
		if len(got) > notify.InputPageMax+200 || !strings.Contains(got, "… clipped") && len(got) > 40*len(in) {
			t.Errorf("depth %d: %d bytes rendered from %d", depth, len(got), len(in))
		}
		if strings.Contains(got, strings.Repeat(" ", 33)) {
			t.Errorf("depth %d: indentation grows past 16 levels", depth)
		}
	}
	small := notify.PrettyInput(deepInput(10_000), 1000)
	if !strings.HasSuffix(small, "… clipped: the first 1000 bytes are shown; the whole input is 20004 bytes of JSON") || len(small) > 1100 {
		t.Errorf("clipped rendering does not say so: %q", small[max(0, len(small)-120):])
	}
	cut := notify.PrettyInput(json.RawMessage(`{"c":"`+strings.Repeat("é", 600)+`"}`), 101)
	if !utf8.ValidString(cut) {
		t.Errorf("clipping split a character: %q", cut)
	}
}

// largestInputs are the inputs request_step accepts at each of its bounds,
// plus two stored before the bounds existed (10,000 deep; 1 MB).
func largestInputs() map[string]json.RawMessage {
	elements := `{"a":[` + strings.Repeat(`"&<>",`, step.MaxInputElements-2) + `0]}`
	return map[string]json.RawMessage{
		"depth 32":          json.RawMessage(`{"a":` + strings.Repeat("[", 31) + strings.Repeat("]", 31) + `}`),
		"1000 elements":     json.RawMessage(elements),
		"64 KiB of & < >":   json.RawMessage(`{"command":"` + strings.Repeat("&<>", (step.MaxInputBytes-20)/3) + `"}`),
		"stored 10000 deep": deepInput(10_000),
		"stored 1 MB":       json.RawMessage(`{"command":"` + strings.Repeat("x", 1_000_000) + `"}`),
	}
}

// TestMessagesOfTheLargestInputsStayWithinLimits: email, Slack and the dev
// outbox of a step with the largest inputs stay small, Slack's texts within
// its limits (header 150, any other text 3000), and say they were clipped;
// each refused, or approved as edited to the same size (the decided message
// then shows both inputs).
func TestMessagesOfTheLargestInputsStayWithinLimits(t *testing.T) {
	for name, in := range largestInputs() {
		for _, edited := range []bool{false, true} {
			testLargestInputMessages(t, fmt.Sprintf("%s (edited %v)", name, edited), in, edited)
		}
	}
}

func testLargestInputMessages(t *testing.T, name string, in json.RawMessage, edited bool) {
	t.Helper()
	f := newFixture()
	s := pendingStep()
	s.Input = in
	ctx := context.Background()
	if err := f.n.Handle(ctx, event.ForStep(event.StepRequested, s, s.Agent, now)); err != nil {
		t.Fatal(err)
	}
	decided := s
	decided.Status, decided.DecidedBy, decided.DecidedAt = step.Refused, "alice", &now
	inputs := 1
	if edited {
		decided.Status, decided.Edited, inputs = step.Approved, in, 2
	}
	if err := f.n.Handle(ctx, event.ForStep(event.StepDecided, decided, "owner:alice", now)); err != nil {
		t.Fatal(err)
	}
	msgs := f.box.List()
	if len(msgs) < 3 {
		t.Fatalf("%s: %d messages, want email and Slack, then the update", name, len(msgs))
	}
	for _, m := range msgs {
		size := len(m.Text) + len(m.Body)
		t.Logf("%s: %s %q: %d bytes (text + body)", name, m.Channel, m.Subject[:min(30, len(m.Subject))], size)
		if m.Channel == "email" && len(m.Text) > inputs*notify.InputEmailMax+4<<10 {
			t.Errorf("%s: email of %d bytes", name, len(m.Text))
		}
		if m.Channel != "slack" {
			continue
		}
		var body struct {
			Blocks []map[string]any `json:"blocks"`
		}
		if err := json.Unmarshal(m.Body, &body); err != nil {
			t.Fatalf("%s: slack body: %v", name, err)
		}
		if len(m.Body) > 16<<10 {
			t.Errorf("%s: Slack payload of %d bytes", name, len(m.Body))
		}
		clipped := false
		for _, b := range body.Blocks {
			limit := 3000
			if b["type"] == "header" {
				limit = 150
			}
			_, texts := slackTexts(b)
			for _, text := range texts {
				if utf8.RuneCountInString(text) > limit {
					t.Errorf("%s: %s block with a text of %d characters", name, b["type"], utf8.RuneCountInString(text))
				}
				if strings.Contains(text, "… clipped: the first") && strings.HasSuffix(text, "bytes of JSON") {
					clipped = true
				}
			}
		}
		if !clipped && len(in) > 2400 {
			t.Errorf("%s: Slack's input block does not say it was clipped", name)
		}
	}
}
