package notify_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/domain/event"
	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/owners/notify"
)

// injected marks the agent's text that tries to format the owner's Slack message.
const injected = "INJECTED"

// hostileStep is a step whose every agent-written field tries to leave its
// place: a ``` that closes the Input code block, backticks that close the
// Does line's code span, bold that reads as Prickle's own words, and
// mentions that would notify the channel.
func hostileStep() step.Step {
	s := pendingStep()
	s.Input = json.RawMessage(`{"command":"echo ok ` + "```" + ` *INJECTED: Approved by alice* ` + "```" + ` <!channel>","description":"` + "`" + ` *INJECTED* ` + "`" + `"}`)
	s.Target = "*INJECTED* <!here>"
	s.Reason = "```\n> *INJECTED: approved already*"
	return s
}

// hostileResult is a result whose agent-written fields do the same.
func hostileResult() task.Task {
	t := approvalTask()
	t.Packet.Task = "_INJECTED_ ```"
	t.Result.Summary = "```\n*INJECTED: Approved by alice* <!channel>"
	t.Result.Evidence = append(t.Result.Evidence, task.Evidence{Kind: "note", Summary: "*INJECTED*", Content: "```\n~INJECTED~"})
	return t
}

// slackTexts walks a Slack payload (a message, an update, a view) and
// returns the text of every mrkdwn object and of every literal one
// (plain_text, and rich_text's text elements).
func slackTexts(v any) (mrkdwn, literal []string) {
	switch x := v.(type) {
	case map[string]any:
		if text, ok := x["text"].(string); ok {
			switch x["type"] {
			case "mrkdwn":
				mrkdwn = append(mrkdwn, text)
			case "plain_text", "text":
				literal = append(literal, text)
			}
		}
		for k, e := range x {
			if k == "text" {
				if _, ok := e.(string); ok {
					continue
				}
			}
			m, l := slackTexts(e)
			mrkdwn, literal = append(mrkdwn, m...), append(literal, l...)
		}
	case []any:
		for _, e := range x {
			m, l := slackTexts(e)
			mrkdwn, literal = append(mrkdwn, m...), append(literal, l...)
		}
	}
	return mrkdwn, literal
}

// TestAgentTextCannotFormatTheSlackMessage: whatever a run writes into a
// step (its input, the Does line made of it, target, reason) or a result
// (work, summary, evidence) reaches Slack only as literal text (rich_text
// elements, plain_text), never as mrkdwn: it cannot close the Input block
// and render as the message's own words (*Approved by alice*), in the
// request or in the messages that replace it. The input is shown whole, as
// the page shows it, and the notification text cannot mention the channel.
func TestAgentTextCannotFormatTheSlackMessage(t *testing.T) {
	ctx := context.Background()
	decidedAt := now.Add(time.Hour)
	approved, refused := hostileStep(), hostileStep()
	approved.Status, approved.DecidedBy, approved.DecidedAt = step.Approved, "alice", &decidedAt
	refused.Status, refused.DecidedBy, refused.DecidedAt, refused.Message = step.Refused, "alice", &decidedAt, "*INJECTED* no"
	asked := hostileStep() // as a permission layer asks: the subject says what the call does
	asked.Kind, asked.Target, asked.Reason = "", "", ""
	done := hostileResult()
	done.State, done.Version = task.Completed, 8
	for _, tc := range []struct {
		name   string
		events []event.Event
	}{
		{"step request, then approved", []event.Event{event.ForStep(event.StepRequested, hostileStep(), "alice/writer", now), event.ForStep(event.StepDecided, approved, "owner:alice", decidedAt)}},
		{"step refused", []event.Event{event.ForStep(event.StepRequested, hostileStep(), "alice/writer", now), event.ForStep(event.StepDecided, refused, "owner:alice", decidedAt)}},
		{"permission-layer step, expired", []event.Event{event.ForStep(event.StepRequested, asked, "alice/writer", now), event.ForStep(event.StepExpired, asked, task.System, decidedAt)}},
		{"step expired", []event.Event{event.ForStep(event.StepRequested, hostileStep(), "alice/writer", now), event.ForStep(event.StepExpired, hostileStep(), task.System, decidedAt)}},
		{"result approval, then approved", []event.Event{event.ForTask(event.ApprovalRequested, hostileResult(), "bob/reviewer", now), event.ForTask(event.ResultDecided, done, "owner:alice", decidedAt)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture()
			for _, e := range tc.events {
				if err := f.n.Handle(ctx, e); err != nil {
					t.Fatal(err)
				}
			}
			slacks := 0
			for _, m := range f.box.List() {
				if m.Channel != "slack" {
					continue
				}
				slacks++
				var body map[string]any
				if err := json.Unmarshal(m.Body, &body); err != nil {
					t.Fatalf("%s: %v", m.Subject, err)
				}
				mrkdwn, literal := slackTexts(body["blocks"])
				for _, text := range mrkdwn {
					if strings.Contains(text, injected) {
						t.Errorf("%s: the agent's text is in mrkdwn, where it formats the message: %q", m.Subject, text)
					}
				}
				if !strings.Contains(strings.Join(literal, "\n"), injected) {
					t.Errorf("%s: the agent's text is not shown at all: %s", m.Subject, m.Body)
				}
				if fallback, _ := body["text"].(string); strings.Contains(fallback, "<!") || strings.Contains(m.Subject, injected) && !strings.Contains(fallback, "&lt;!channel&gt;") {
					t.Errorf("%s: the notification text carries a raw mention: %q", m.Subject, fallback)
				}
				if strings.HasPrefix(tc.name, "step") && !strings.Contains(strings.Join(literal, "\n"), notify.PrettyInput(hostileStep().Input, notify.InputEmailMax)) {
					t.Errorf("%s: the input is not shown as it is: %s", m.Subject, m.Body)
				}
			}
			if slacks != 2 {
				t.Fatalf("%d Slack messages, want the request and its update", slacks)
			}
		})
	}
}
