package notify_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/auth/link"
	"github.com/useprickle/prickle/shared/domain/event"
	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/owners/notify"
)

type slackBody struct {
	Blocks []struct {
		Type     string `json:"type"`
		BlockID  string `json:"block_id"`
		Elements []struct {
			Type     string `json:"type"`
			ActionID string `json:"action_id"`
			Value    string `json:"value"`
			URL      string `json:"url"`
			Style    string `json:"style"`
			Text     any    `json:"text"`
		} `json:"elements"`
	} `json:"blocks"`
}

// buttons returns the action ids and values of a Slack message's actions blocks.
func buttons(t *testing.T, body []byte) map[string]string {
	t.Helper()
	var b slackBody
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, bl := range b.Blocks {
		if bl.Type != "actions" {
			continue
		}
		for _, el := range bl.Elements {
			out[el.ActionID] = el.Value + el.URL + "|" + el.Style
		}
	}
	return out
}

func TestRequestMessagesCarryApproveAndRefuseButtons(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name  string
		event event.Event
		kind  string
	}{
		{"step", event.ForStep(event.StepRequested, pendingStep(), "alice/writer", now), link.KindStep},
		{"result", event.ForTask(event.ApprovalRequested, approvalTask(), "bob/reviewer", now), link.KindResult},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture()
			if err := f.n.Handle(ctx, c.event); err != nil {
				t.Fatal(err)
			}
			var slack []byte
			var page string
			for _, m := range f.box.List() {
				if m.Channel == "slack" {
					slack, page = m.Body, m.Links[0]
				}
			}
			if slack == nil {
				t.Fatal("no Slack message")
			}
			got := buttons(t, slack)
			token := strings.TrimPrefix(page, "https://app.example.com/a/")
			if got[notify.ActionApprove] != token+"|primary" || got[notify.ActionRefuse] != token+"|danger" {
				t.Errorf("buttons = %v, want approve and refuse carrying the link's token %s", got, token)
			}
			// A step's call can be edited, then approved; a result's cannot.
			if edit, ok := got[notify.ActionEdit]; (c.kind == link.KindStep) != ok || (ok && edit != token+"|") {
				t.Errorf("edit button = %q (present %v), want it on a step only, carrying the token", edit, ok)
			}
			if got[notify.ActionOpenPage] != page+"|" {
				t.Errorf("page button = %q, want %q", got[notify.ActionOpenPage], page)
			}
			claims, err := signer.Verify(token, now)
			if err != nil || claims.Kind != c.kind || claims.Owner != "alice" {
				t.Errorf("button token claims = %+v, %v", claims, err)
			}
			if !strings.Contains(string(slack), "Only alice can decide") {
				t.Errorf("the message does not say who may decide: %s", slack)
			}
		})
	}
}

func TestSettledMessagesHaveNoButtons(t *testing.T) {
	ctx := context.Background()
	f := newFixture()
	s := pendingStep()
	if err := f.n.Handle(ctx, event.ForStep(event.StepRequested, s, s.Agent, now)); err != nil {
		t.Fatal(err)
	}
	at := now.Add(time.Minute)
	s.Status, s.DecidedBy, s.DecidedAt, s.Message = step.Refused, "alice", &at, "not today"
	if err := f.n.Handle(ctx, event.ForStep(event.StepDecided, s, "owner:alice", at)); err != nil {
		t.Fatal(err)
	}
	msgs := f.box.List()
	update := msgs[len(msgs)-1]
	if !strings.HasPrefix(update.Subject, "updated: ") {
		t.Fatalf("last message is not the update: %+v", update)
	}
	if got := buttons(t, update.Body); len(got) != 0 {
		t.Errorf("the settled message still has buttons: %v", got)
	}
	for _, want := range []string{"Refused by alice", "2026-11-29T09:01:00Z", "not today"} {
		if !strings.Contains(string(update.Body), want) {
			t.Errorf("the settled message lacks %q (who, when, what): %s", want, update.Body)
		}
	}
}

// TestButtonValueFitsSlack: the token in a button is within Slack's 2000
// characters even for the longest task and step ids and owner names.
func TestButtonValueFitsSlack(t *testing.T) {
	long := strings.Repeat("x", 64)
	exp := time.Date(2026, 12, 31, 23, 59, 59, 999999999, time.UTC)
	for _, c := range []link.Claims{
		link.ForStep(long, "stp_"+long, long, exp),
		link.ForResult(long, exp.Format(time.RFC3339Nano), long, exp),
	} {
		if tok := signer.Sign(c); len(tok) > notify.SlackValueMax {
			t.Errorf("%s token is %d characters, over Slack's %d", c.Kind, len(tok), notify.SlackValueMax)
		} else if len(tok) < 100 {
			t.Errorf("%s token is suspiciously short (%d)", c.Kind, len(tok))
		}
	}
}
