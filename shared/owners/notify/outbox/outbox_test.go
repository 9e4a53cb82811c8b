package outbox

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/owners/notify"
)

func TestListIsNewestLastAndACopy(t *testing.T) {
	o := New()
	at := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	o.Now = func() time.Time { return at }
	o.Add(Message{Channel: ChannelWake, To: "https://hooks.example.com/wake", Subject: "first"})
	o.Add(Message{Channel: ChannelWake, Subject: "second", At: at.Add(time.Minute)})
	got := o.List()
	if len(got) != 2 || got[0].Subject != "first" || got[1].Subject != "second" {
		t.Fatalf("List = %+v", got)
	}
	if !got[0].At.Equal(at) {
		t.Errorf("a message without a time was stamped %v, want %v", got[0].At, at)
	}
	got[0].Subject = "changed"
	if o.List()[0].Subject != "first" {
		t.Error("List returned the outbox's own slice")
	}
}

func TestJSONFieldNames(t *testing.T) {
	o := New()
	o.Add(Message{At: time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC), Channel: ChannelEmail, To: "a@example.com", Subject: "s", Text: "x && y <z>", Links: []string{"http://l"}, Body: json.RawMessage(`{"k":1}`)})
	o.Add(Message{Channel: ChannelWake})
	b, err := MarshalList(o.List())
	if err != nil {
		t.Fatal(err)
	}
	var raw []map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	for _, m := range raw {
		var keys []string
		for k := range m {
			keys = append(keys, k)
		}
		if len(m) != 7 {
			t.Errorf("fields = %v, want at channel to subject text links body", keys)
		}
		for _, k := range []string{"at", "channel", "to", "subject", "text", "links", "body"} {
			if _, ok := m[k]; !ok {
				t.Errorf("field %q missing in %s", k, b)
			}
		}
	}
	if string(raw[1]["links"]) != "[]" || string(raw[1]["body"]) != "{}" {
		t.Errorf("empty links/body = %s / %s, want [] and {}", raw[1]["links"], raw[1]["body"])
	}
	if !strings.Contains(string(b), "x && y <z>") {
		t.Errorf("text is HTML-escaped: %s", b)
	}
	if b, _ := MarshalList(nil); string(b) != "[]" {
		t.Errorf("empty outbox = %s, want []", b)
	}
}

func TestSlackPortRecordsPostsAndUpdates(t *testing.T) {
	o := New()
	ctx := context.Background()
	ref, err := o.Post(ctx, notify.SlackMessage{Channel: "C1", Subject: "Approve Bash?", Text: "Approve Bash?", Links: []string{"http://x/a/t"}})
	if err != nil {
		t.Fatal(err)
	}
	if ref.Channel != "C1" || ref.TS == "" {
		t.Fatalf("ref = %+v", ref)
	}
	if err := o.Update(ctx, ref, notify.SlackMessage{Channel: "C1", Subject: "Approved step", Text: "Approved by alice"}); err != nil {
		t.Fatal(err)
	}
	if err := o.SendEmail(ctx, notify.Email{To: "a@example.com", Subject: "Approve Bash?", Text: "body", Links: []string{"http://x/a/t"}}); err != nil {
		t.Fatal(err)
	}
	got := o.List()
	if len(got) != 3 {
		t.Fatalf("List = %+v", got)
	}
	if got[0].Subject != "Approve Bash?" || got[1].Subject != "updated: Approved step" || got[2].Channel != ChannelEmail {
		t.Errorf("messages = %+v", got)
	}
	var upd struct {
		UpdateOf string `json:"update_of"`
	}
	if err := json.Unmarshal(got[1].Body, &upd); err != nil || upd.UpdateOf != ref.TS {
		t.Errorf("update body = %s, want update_of %s", got[1].Body, ref.TS)
	}
}

func TestConcurrentAdds(t *testing.T) {
	o := New()
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			if _, err := o.Post(context.Background(), notify.SlackMessage{Channel: "C"}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, m := range o.List() {
		var b struct{ TS string }
		_ = json.Unmarshal(m.Body, &b)
		if seen[b.TS] {
			t.Errorf("ts %s given twice", b.TS)
		}
		seen[b.TS] = true
	}
	if len(seen) != 50 {
		t.Errorf("%d messages, want 50", len(seen))
	}
}

func TestModalsAndEphemeralAnswers(t *testing.T) {
	o := New()
	ctx := context.Background()
	if err := o.OpenView(ctx, "trig.1", json.RawMessage(`{"type":"modal","title":{"type":"plain_text","text":"Refuse"},"blocks":[{"type":"section","text":{"type":"mrkdwn","text":"Refuse step stp_1?"}}]}`)); err != nil {
		t.Fatal(err)
	}
	if err := o.Respond(ctx, "https://hooks.slack.com/actions/x", json.RawMessage(`{"response_type":"ephemeral","text":"Only alice can decide this."}`)); err != nil {
		t.Fatal(err)
	}
	if err := o.OpenView(ctx, "trig.2", json.RawMessage(`not json`)); err == nil {
		t.Error("a view that is not JSON was recorded")
	}
	got := o.List()
	if len(got) != 2 {
		t.Fatalf("outbox = %+v", got)
	}
	if got[0].Subject != "modal: Refuse" || got[0].To != "trigger trig.1" || got[0].Text != "Refuse step stp_1?" || !strings.Contains(string(got[0].Body), `"type":"modal"`) {
		t.Errorf("modal = %+v", got[0])
	}
	if got[1].Subject != "ephemeral: Only alice can decide this." || got[1].To != "https://hooks.slack.com/actions/x" {
		t.Errorf("ephemeral = %+v", got[1])
	}
}
