package slackapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/useprickle/prickle/shared/owners/notify"
)

func TestPostAndUpdate(t *testing.T) {
	type call struct {
		path, auth string
		body       map[string]any
	}
	var calls []call
	answers := map[string]string{
		"/chat.postMessage": `{"ok":true,"channel":"C0ALICE","ts":"1700000000.000100"}`,
		"/chat.update":      `{"ok":true,"channel":"C0ALICE","ts":"1700000000.000100"}`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var b map[string]any
		_ = json.Unmarshal(raw, &b)
		calls = append(calls, call{r.URL.Path, r.Header.Get("Authorization"), b})
		if ans, ok := answers[r.URL.Path]; ok {
			_, _ = io.WriteString(w, ans)
			return
		}
		_, _ = io.WriteString(w, `{"ok":false,"error":"unknown_method"}`)
	}))
	defer srv.Close()
	c, err := New("xoxb-test")
	if err != nil {
		t.Fatal(err)
	}
	c.BaseURL = srv.URL
	ctx := context.Background()
	ref, err := c.Post(ctx, notify.SlackMessage{Channel: "C0ALICE", Text: "Approve Bash?", Blocks: json.RawMessage(`[{"type":"divider"}]`)})
	if err != nil {
		t.Fatal(err)
	}
	if ref != (notify.MessageRef{Channel: "C0ALICE", TS: "1700000000.000100"}) {
		t.Errorf("ref = %+v", ref)
	}
	if err := c.Update(ctx, ref, notify.SlackMessage{Text: "Approved by alice"}); err != nil {
		t.Fatal(err)
	}
	if len(calls) != 2 || calls[0].path != "/chat.postMessage" || calls[1].path != "/chat.update" {
		t.Fatalf("calls = %+v", calls)
	}
	if calls[0].auth != "Bearer xoxb-test" || calls[0].body["unfurl_links"] != false || calls[0].body["blocks"] == nil {
		t.Errorf("post = %+v", calls[0])
	}
	if calls[1].body["ts"] != "1700000000.000100" || calls[1].body["channel"] != "C0ALICE" || calls[1].body["text"] != "Approved by alice" {
		t.Errorf("update = %+v", calls[1])
	}

	answers["/chat.postMessage"] = `{"ok":false,"error":"channel_not_found"}`
	_, err = c.Post(ctx, notify.SlackMessage{Channel: "CX"})
	if err == nil || !strings.Contains(err.Error(), "channel_not_found") {
		t.Fatalf("err = %v, want channel_not_found", err)
	}
	if strings.Contains(err.Error(), "xoxb") {
		t.Error("the error shows the token")
	}
	if _, err := New(""); err == nil {
		t.Error("New without a token succeeded")
	}
}

func TestOpenViewAndRespond(t *testing.T) {
	var paths, bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		paths, bodies = append(paths, r.URL.Path), append(bodies, string(raw))
		if r.URL.Path == "/api/views.open" {
			if r.Header.Get("Authorization") != "Bearer xoxb-test" {
				t.Errorf("views.open without the bot token")
			}
			_, _ = io.WriteString(w, `{"ok":true}`)
			return
		}
		if r.Header.Get("Authorization") != "" {
			t.Errorf("the response_url got the bot token")
		}
		_, _ = io.WriteString(w, "ok")
	}))
	defer srv.Close()
	c, _ := New("xoxb-test")
	c.BaseURL, c.ResponsePrefix = srv.URL+"/api", srv.URL+"/actions/"
	ctx := context.Background()
	if err := c.OpenView(ctx, "trig.1", json.RawMessage(`{"type":"modal"}`)); err != nil {
		t.Fatal(err)
	}
	if err := c.Respond(ctx, srv.URL+"/actions/T1/1/abc", json.RawMessage(`{"response_type":"ephemeral","text":"only alice can decide this"}`)); err != nil {
		t.Fatal(err)
	}
	if len(paths) != 2 || paths[0] != "/api/views.open" || !strings.Contains(bodies[0], `"trigger_id":"trig.1"`) || !strings.Contains(bodies[0], `"view":{"type":"modal"}`) {
		t.Errorf("views.open call = %v %v", paths, bodies)
	}
	if len(paths) == 2 && (paths[1] != "/actions/T1/1/abc" || !strings.Contains(bodies[1], "only alice")) {
		t.Errorf("response_url call = %v %v", paths, bodies)
	}
}

// TestRespondRefusesOtherHosts: a forged payload's response_url never makes Prickle call another host.
func TestRespondRefusesOtherHosts(t *testing.T) {
	called := false
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { called = true }))
	defer srv.Close()
	c, _ := New("xoxb-test")
	for _, u := range []string{
		srv.URL + "/actions/x",
		"http://hooks.slack.com/actions/x",
		"https://hooks.slack.com.evil.example/actions/x",
		"https://hooks.slack.com@" + strings.TrimPrefix(srv.URL, "http://") + "/x",
		"https://hooks.slack.com:8443/actions/x",
		"https://evil.example/https://hooks.slack.com/",
		"",
	} {
		if err := c.Respond(context.Background(), u, json.RawMessage(`{}`)); err == nil || !strings.Contains(err.Error(), "not called") {
			t.Errorf("Respond(%q) = %v, want refused", u, err)
		}
	}
	if called {
		t.Error("a refused response_url was called")
	}
	if !under("https://hooks.slack.com/actions/T1/2/x", DefaultResponsePrefix) {
		t.Error("a real response_url is refused")
	}
}
