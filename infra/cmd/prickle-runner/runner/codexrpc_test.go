package runner

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// codexSide is the app-server's end of an rpcConn under test: what the
// client wrote, line by line, and a writer for what the server sends.
type codexSide struct {
	lines *bufio.Scanner
	send  *io.PipeWriter
}

func newTestConn(t *testing.T) (*rpcConn, codexSide) {
	t.Helper()
	fromServer, toClient := io.Pipe()
	fromClient, toServer := io.Pipe()
	c := newRPCConn(fromServer, toServer)
	t.Cleanup(func() { _ = toClient.Close(); _ = fromClient.Close() })
	return c, codexSide{lines: bufio.NewScanner(fromClient), send: toClient}
}

func (s codexSide) next(t *testing.T) map[string]any {
	t.Helper()
	if !s.lines.Scan() {
		t.Fatalf("no line from the client: %v", s.lines.Err())
	}
	var m map[string]any
	if err := json.Unmarshal(s.lines.Bytes(), &m); err != nil {
		t.Fatalf("the client wrote %q: %v", s.lines.Text(), err)
	}
	return m
}

func TestRPCFraming(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, c *rpcConn, s codexSide)
	}{
		{"a call is one line and gets the answer with its id, whatever the order", func(t *testing.T, c *rpcConn, s codexSide) {
			got := make(chan string, 2)
			for _, method := range []string{"first", "second"} {
				go func() {
					var r struct{ Echo string }
					if err := c.Call(context.Background(), method, map[string]int{"n": 1}, &r); err != nil {
						got <- "error: " + err.Error()
						return
					}
					got <- method + "=" + r.Echo
				}()
			}
			ids := map[string]any{}
			for range 2 {
				m := s.next(t)
				if m["jsonrpc"] != "2.0" || m["params"].(map[string]any)["n"] != 1.0 {
					t.Errorf("request %v", m)
				}
				ids[m["method"].(string)] = m["id"]
			}
			// answered in the other order, the ids say which is which
			for _, method := range []string{"second", "first"} {
				b, _ := json.Marshal(map[string]any{"id": ids[method], "result": map[string]string{"Echo": method}})
				_, _ = s.send.Write(append(b, '\n'))
			}
			answers := map[string]bool{<-got: true, <-got: true}
			if !answers["first=first"] || !answers["second=second"] {
				t.Errorf("answers %v", answers)
			}
		}},
		{"an error answer is the call's error", func(t *testing.T, c *rpcConn, s codexSide) {
			done := make(chan error, 1)
			go func() { done <- c.Call(context.Background(), "thread/resume", map[string]string{}, nil) }()
			m := s.next(t)
			_, _ = s.send.Write([]byte(`{"id":` + jsonText(m["id"]) + `,"error":{"code":-32600,"message":"no rollout found"}}` + "\n"))
			err := <-done
			var re *rpcError
			if !errors.As(err, &re) || re.Code != -32600 || !strings.Contains(err.Error(), "thread/resume") {
				t.Errorf("error %v", err)
			}
		}},
		{"requests and notifications arrive in order; blank lines are skipped", func(t *testing.T, c *rpcConn, s codexSide) {
			_, _ = s.send.Write([]byte("{\"method\":\"item/started\",\"params\":{\"n\":1}}\n\n{\"id\":0,\"method\":\"item/commandExecution/requestApproval\",\"params\":{}}\n{\"id\":\"x\",\"method\":\"mcpServer/elicitation/request\"}\n"))
			want := []struct {
				method string
				req    bool
				id     string
			}{{"item/started", false, ""}, {"item/commandExecution/requestApproval", true, "0"}, {"mcpServer/elicitation/request", true, `"x"`}}
			for _, w := range want {
				m := <-c.Incoming()
				if m.Method != w.method || m.isRequest() != w.req || m.isNotification() == w.req || string(m.ID) != w.id {
					t.Errorf("got %+v, want %+v", m, w)
				}
			}
		}},
		{"replies keep the request's id (a number or a string)", func(t *testing.T, c *rpcConn, s codexSide) {
			go func() {
				_ = c.Reply(json.RawMessage(`0`), map[string]string{"decision": "accept"})
				_ = c.ReplyError(json.RawMessage(`"e1"`), rpcMethodNotFound, "no")
				_ = c.Notify("initialized", nil)
			}()
			if m := s.next(t); m["id"] != 0.0 || m["result"].(map[string]any)["decision"] != "accept" || m["method"] != nil {
				t.Errorf("reply %v", m)
			}
			if m := s.next(t); m["id"] != "e1" || m["error"].(map[string]any)["code"] != float64(rpcMethodNotFound) {
				t.Errorf("error reply %v", m)
			}
			if m := s.next(t); m["method"] != "initialized" || m["id"] != nil || m["params"] != nil {
				t.Errorf("notification %v", m)
			}
		}},
		{"the stream's end fails the waiting call and closes Incoming", func(t *testing.T, c *rpcConn, s codexSide) {
			done := make(chan error, 1)
			go func() { done <- c.Call(context.Background(), "turn/start", nil, nil) }()
			s.next(t)
			_ = s.send.Close()
			if err := <-done; err == nil || !strings.Contains(err.Error(), "ended before the answer") {
				t.Errorf("error %v", err)
			}
			if _, open := <-c.Incoming(); open {
				t.Error("Incoming stays open")
			}
			if err := c.Call(context.Background(), "again", nil, nil); err == nil {
				t.Error("a call after the end succeeds")
			}
		}},
		{"a line that is not JSON ends the stream with the reason", func(t *testing.T, c *rpcConn, s codexSide) {
			_, _ = s.send.Write([]byte("WARNING: not JSON\n"))
			<-c.Done()
			if err := c.Err(); err == nil || !strings.Contains(err.Error(), "not JSON-RPC") {
				t.Errorf("err %v", err)
			}
		}},
		{"a call gives up when its context ends", func(t *testing.T, c *rpcConn, s codexSide) {
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			go func() { s.lines.Scan() }() // read the request, never answer it
			if err := c.Call(ctx, "initialize", nil, nil); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("err %v", err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, s := newTestConn(t)
			tt.run(t, c, s)
		})
	}
}

func TestReadLineBound(t *testing.T) {
	for _, tc := range []struct {
		in      string
		max     int
		want    string
		wantErr bool
	}{
		{"short\nnext", 100, "short", false},
		{strings.Repeat("x", 200) + "\n", 1000, strings.Repeat("x", 200), false},
		{strings.Repeat("x", 200) + "\n", 100, "", true},
	} {
		br := bufio.NewReaderSize(strings.NewReader(tc.in), 16)
		got, err := readLine(br, tc.max)
		if string(got) != tc.want || (err != nil && !errors.Is(err, io.EOF)) != tc.wantErr {
			t.Errorf("readLine(%.20q, %d) = %.20q, %v", tc.in, tc.max, got, err)
		}
	}
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
