//go:build integration

package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/auth/session"
	"github.com/useprickle/prickle/shared/jobs/runnerapi"
	wakeupjob "github.com/useprickle/prickle/shared/jobs/wakeup"
	"github.com/useprickle/prickle/shared/owners/slack"
)

// liveStack is the local stack as `make local` serves it (the emulator, the
// seeded store, the whole handler behind newServer) on a free loopback port.
type liveStack struct {
	env  *environment
	addr string // 127.0.0.1:port
	port string
}

func startStack(t *testing.T) liveStack {
	t.Helper()
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(root)
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	emu, err := startEmulator(ctx, filepath.Join(dir, "dynamodb.log"), filepath.Join(dir, "emulator.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(emu.stop)
	env, err := prepare(ctx, config{stateDir: dir, template: "template.yaml"}, emu.endpoint)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	handler, err := env.handler(ctx, slog.New(slog.DiscardHandler), "http://"+ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	srv := newServer(handler, port)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return liveStack{env: env, addr: ln.Addr().String(), port: port}
}

// send opens a connection to the stack and writes raw, the start of a
// request; nil (the test failed) if it could not.
func (s liveStack) send(t *testing.T, raw string) net.Conn {
	c, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Errorf("dial: %v", err)
		return nil
	}
	if _, err := io.WriteString(c, raw); err != nil {
		c.Close()
		t.Errorf("send %.40q: %v", raw, err)
		return nil
	}
	return c
}

// hostRefusal is what a refused Host gets back, whatever the route.
const hostRefusal = "answers requests for 127.0.0.1:"

// TestEveryRouteChecksTheHost: a DNS-rebinding page (Host evil.example:<port>,
// no Origin) gets 403 on every route of the local server, the dev outbox's
// sign-in and approval links and run tokens, approval and sign-in pages and
// /mcp alike; so does a loopback name on another port. The loopback names and
// addresses with the stack's port are served.
func TestEveryRouteChecksTheHost(t *testing.T) {
	s := startStack(t)
	keys, err := session.NewKeys(s.env.signer.Key)
	if err != nil {
		t.Fatal(err)
	}
	routes := []struct{ method, path, body string }{
		{"GET", "/dev/outbox.json", ""}, {"GET", "/dev/outbox", ""},
		{"GET", "/signin/" + keys.SignInToken("alice", session.ViaEmail, time.Now()), ""}, {"GET", "/signin", ""}, {"POST", "/signin", "owner=alice"},
		{"GET", "/a/eyJraW5kIjoic3RlcCJ9.c2ln", ""}, {"GET", "/", ""}, {"GET", "/p/website-v2", ""}, {"GET", "/t/example-task-id", ""},
		{"GET", "/docs/reference/mcp-tools", ""}, {"GET", "/static/app.css", ""},
		{"POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`},
		{"GET", "/oauth/clients", ""}, {"GET", "/.well-known/oauth-authorization-server", ""},
		{"POST", runnerapi.ClaimPath, `{"wait_seconds":0}`}, {"POST", slack.Path, "payload=%7B%7D"}, {"POST", wakeupjob.ReceiverPath + "alice/writer", "{}"},
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	do := func(method, path, body, host string) (int, string) {
		req, err := http.NewRequest(method, "http://"+s.addr+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		req.Header.Set("Authorization", "Bearer "+s.env.tokens["alice/writer"])
		if method == "POST" && strings.Contains(body, "=") {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s (Host %s): %v", method, path, host, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, host := range []string{"evil.example:" + s.port, "127.0.0.1.evil.example:" + s.port, "localhost.evil.example:" + s.port,
		"evil.example", "127.0.0.1", "localhost", "127.0.0.1:1", "localhost:1", "10.0.0.1:" + s.port, "[fe80::1]:" + s.port} {
		for _, r := range routes {
			code, body := do(r.method, r.path, r.body, host)
			if code != http.StatusForbidden || !strings.Contains(body, hostRefusal) {
				t.Errorf("%s %s with Host %s: HTTP %d %.120q, want 403 naming the hosts it answers", r.method, r.path, host, code, body)
			}
			if strings.Contains(body, "prk_") || strings.Contains(body, "/signin/") {
				t.Errorf("%s %s with Host %s leaked a token or a link: %.200s", r.method, r.path, host, body)
			}
		}
	}
	for _, host := range []string{"127.0.0.1:" + s.port, "localhost:" + s.port, "LocalHost:" + s.port, "[::1]:" + s.port} {
		for _, r := range routes {
			if code, body := do(r.method, r.path, r.body, host); strings.Contains(body, hostRefusal) {
				t.Errorf("%s %s with Host %s: HTTP %d %.120q, want it served", r.method, r.path, host, code, body)
			}
		}
		if code, _ := do("GET", "/dev/outbox.json", "", host); code != http.StatusOK {
			t.Errorf("the dev outbox with Host %s: HTTP %d", host, code)
		}
	}

	// The profiles (PRICKLE_PPROF) are checked the same way.
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	pprofAddr := free.Addr().String()
	_, pprofPort, _ := net.SplitHostPort(pprofAddr)
	free.Close()
	if err := servePprof(pprofAddr, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	for host, want := range map[string]int{"evil.example:" + pprofPort: http.StatusForbidden, "127.0.0.1:" + pprofPort: http.StatusOK} {
		req, _ := http.NewRequest("GET", "http://"+pprofAddr+"/debug/pprof/", nil)
		req.Host = host
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("pprof with Host %s: HTTP %d, want %d", host, resp.StatusCode, want)
		}
	}
}

// TestSlowBodiesAndIdleConnectionsAreBounded: connections that send a body
// one byte every 2 s are closed once the body deadline passes, and an idle
// keep-alive connection once the idle timeout does; a long poll of
// POST /runner/claim still waits its full runnerapi.MaxWait and answers.
func TestSlowBodiesAndIdleConnectionsAreBounded(t *testing.T) {
	s := startStack(t)
	var wg sync.WaitGroup
	// The long poll: nothing is claimable (every seeded agent has a wake hook), so it waits all of MaxWait.
	wg.Go(func() {
		start := time.Now()
		req, _ := http.NewRequest("POST", "http://"+s.addr+runnerapi.ClaimPath, strings.NewReader(fmt.Sprintf(`{"wait_seconds":%d}`, runnerapi.MaxWait)))
		req.Header.Set("Authorization", "Bearer "+s.env.tokens["alice/writer"])
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Errorf("long poll: %v", err)
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if took := time.Since(start); resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"wakeups":[]`) || took < runnerapi.MaxWait*time.Second {
			t.Errorf("long poll: HTTP %d %s after %v, want 200 and no wake-ups after %ds", resp.StatusCode, b, took, runnerapi.MaxWait)
		}
	})
	// Slow bodies, on each route that reads one.
	const slow = 20
	for i := range slow {
		path := []string{"/mcp", runnerapi.ClaimPath, "/signin", slack.Path}[i%4]
		wg.Go(func() {
			c := s.send(t, fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n", path, s.addr))
			if c == nil {
				return
			}
			defer c.Close()
			start := time.Now()
			closed := make(chan struct{})
			go func() {
				_, _ = io.Copy(io.Discard, c) // whatever the server answers, until it closes
				close(closed)
			}()
			tick := time.NewTicker(2 * time.Second)
			defer tick.Stop()
			for {
				select {
				case <-closed:
					if took := time.Since(start); took > bodyTimeout+3*time.Second {
						t.Errorf("slow body on %s: closed after %v, want within %v", path, took, bodyTimeout)
					}
					return
				case <-tick.C:
					if time.Since(start) > bodyTimeout+10*time.Second {
						t.Errorf("slow body on %s: still open after %v", path, time.Since(start))
						return
					}
					_, _ = c.Write([]byte("x"))
				}
			}
		})
	}
	// An idle keep-alive connection, after one request.
	wg.Go(func() {
		c := s.send(t, fmt.Sprintf("GET /dev/outbox.json HTTP/1.1\r\nHost: %s\r\n\r\n", s.addr))
		if c == nil {
			return
		}
		defer c.Close()
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Errorf("idle connection's request: %v", err)
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		start := time.Now()
		_ = c.SetReadDeadline(start.Add(idleTimeout + 10*time.Second))
		_, err = br.ReadByte()
		if took := time.Since(start); err == nil || took > idleTimeout+3*time.Second {
			t.Errorf("idle connection: read %v after %v, want closed within %v", err, took, idleTimeout)
		}
	})
	wg.Wait()
}
