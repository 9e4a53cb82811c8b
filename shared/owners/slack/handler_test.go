package slack_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/owners/notify"
	"github.com/useprickle/prickle/shared/owners/slack"
)

func TestRequestsThatAreNotInteractions(t *testing.T) {
	h := newHarness(t, memoryBackend(t))
	get, _ := http.NewRequest(http.MethodGet, h.srv.URL+slack.Path, nil)
	if a := h.send(get); a.status != http.StatusMethodNotAllowed {
		t.Errorf("GET = %d, want 405", a.status)
	}
	if a := h.post([]byte("token=abc"), h.clock, signed); a.status != http.StatusBadRequest {
		t.Errorf("signed body without payload = %d, want 400", a.status)
	}
	big := []byte("payload=" + strings.Repeat("x", slack.MaxBody))
	if a := h.post(big, h.clock, signed); a.status != http.StatusRequestEntityTooLarge {
		t.Errorf("body over 1 MiB = %d, want 413", a.status)
	}
	if a := h.click(map[string]any{"type": "shortcut", "callback_id": "x"}); a.status != 200 || a.body != "" {
		t.Errorf("another interaction type = %d %q, want an empty 200", a.status, a.body)
	}
}

func TestOffWithoutASigningSecret(t *testing.T) {
	srv := httptest.NewServer(slack.New(slack.Config{Log: slog.New(slog.DiscardHandler)}))
	defer srv.Close()
	resp, err := http.Post(srv.URL, "application/x-www-form-urlencoded", strings.NewReader("payload=%7B%7D"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("status = %d, want 404 (interactivity off)", resp.StatusCode)
	}
}

func TestThePageButtonDecidesNothing(t *testing.T) {
	h := newHarness(t, memoryBackend(t))
	s := h.pendingStep("tsk_page_button")
	p := blockActions("U0ALICE", notify.ActionOpenPage, "")
	if a := h.click(p); a.status != 200 || a.body != "" {
		t.Errorf("answer = %d %q", a.status, a.body)
	}
	if got := h.step(s.TaskID, s.ID); got.Status != step.Pending {
		t.Errorf("the page's link button decided: %s", got.Status)
	}
	if e := h.ephemerals(); len(e) != 0 {
		t.Errorf("ephemeral answers = %q", e)
	}
}

// failingSlack is Slack refusing views.open (e.g. an expired trigger_id).
type failingSlack struct{ responses []string }

func (f *failingSlack) OpenView(context.Context, string, json.RawMessage) error {
	return errors.New("slack views.open: expired_trigger_id")
}

func (f *failingSlack) Respond(_ context.Context, _ string, body json.RawMessage) error {
	f.responses = append(f.responses, string(body))
	return nil
}

func TestAModalThatCannotOpenSaysSo(t *testing.T) {
	b := memoryBackend(t)
	h := newHarness(t, b)
	s := h.pendingStep("tsk_no_modal")
	fs := &failingSlack{}
	endpoint := slack.New(slack.Config{Secret: secret, Replays: b.replays, Signer: signer, Owners: b.owners, Decider: h.svc, Slack: fs,
		Now: func() time.Time { return h.clock }, Log: slog.New(slog.DiscardHandler)})
	h.srv.Config.Handler = endpoint
	h.click(blockActions("U0ALICE", notify.ActionRefuse, h.buttonValue(notify.ActionRefuse)))
	if len(fs.responses) != 1 || !strings.Contains(fs.responses[0], "could not be opened") || !strings.Contains(fs.responses[0], `"response_type":"ephemeral"`) {
		t.Errorf("responses = %q", fs.responses)
	}
	if got := h.step(s.TaskID, s.ID); got.Status != step.Pending {
		t.Errorf("step = %s", got.Status)
	}
}
