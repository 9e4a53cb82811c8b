package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/useprickle/prickle/infra/dev/toolcall"
)

// Kinds of answers a call gets. Only ok and stale are expected under load:
// stale is a refusal because the task moved since the caller read it (a race
// lost, or another agent's move in between), which a team of agents meets.
const (
	kindOK          = "ok"
	kindStale       = "refused_stale"
	kindRefused     = "refused_other"
	kindTemporary   = "temporary"
	kindRPCError    = "rpc_error"
	kindHTTP4xx     = "http_4xx"
	kindTransport   = "transport"
	kindBadResponse = "bad_response"
)

// expected reports whether an answer of this kind is part of a healthy run.
func expected(kind string) bool { return kind == kindOK || kind == kindStale }

// outcomeUnknown reports whether a move answered this way may or may not have landed.
func outcomeUnknown(kind string) bool {
	return kind == kindTemporary || strings.HasPrefix(kind, "http_5") || kind == kindTransport || kind == kindRPCError || kind == kindBadResponse
}

// answer is one tool call's result as the load command sees it.
type answer struct {
	kind    string
	status  int
	text    string
	content json.RawMessage // structuredContent of a successful call
	latency time.Duration
}

// mcpClient sends MCP 2026-07-28 tool calls over HTTP, as an agent's client does.
type mcpClient struct {
	url  string
	http *http.Client
}

func newMCPClient(url string, timeout time.Duration) *mcpClient {
	return &mcpClient{url: url, http: &http.Client{
		Timeout:   timeout,
		Transport: &http.Transport{MaxIdleConnsPerHost: 512, MaxIdleConns: 1024, IdleConnTimeout: 90 * time.Second},
	}}
}

// call sends one tools/call and classifies the answer.
func (c *mcpClient) call(ctx context.Context, token, tool string, args any) answer {
	a, err := json.Marshal(args)
	if err != nil {
		return answer{kind: kindBadResponse, text: err.Error()}
	}
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":%s,`+
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"prickle-load","version":"0"},"io.modelcontextprotocol/clientCapabilities":{}}}}`, tool, a)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, strings.NewReader(body))
	if err != nil {
		return answer{kind: kindTransport, text: err.Error()}
	}
	toolcall.SetHeaders(req, token, tool)
	start := time.Now()
	resp, err := c.http.Do(req)
	if err != nil {
		return answer{kind: kindTransport, text: err.Error(), latency: time.Since(start)}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	lat := time.Since(start)
	if err != nil {
		return answer{kind: kindTransport, status: resp.StatusCode, text: err.Error(), latency: lat}
	}
	return classify(resp.StatusCode, raw, lat)
}

// classify reads an HTTP answer to a tools/call.
func classify(status int, raw []byte, lat time.Duration) answer {
	a := answer{status: status, latency: lat, text: string(raw)}
	switch {
	case status >= 500:
		a.kind = fmt.Sprintf("http_%d", status)
		return a
	case status >= 400:
		a.kind = kindHTTP4xx
		return a
	}
	resp, err := toolcall.Parse(raw)
	if err != nil {
		a.kind = kindBadResponse
		return a
	}
	switch {
	case resp.Error != nil:
		a.kind, a.text = kindRPCError, resp.Error.Message
	case resp.Result == nil:
		a.kind = kindBadResponse
	case resp.Result.IsError:
		a.text = resp.Text()
		a.kind = refusalKind(a.text)
	default:
		a.kind, a.content = kindOK, resp.Result.StructuredContent
	}
	return a
}

// refusalKind tells a refusal because the task had moved (the team
// service's "changed by another call", or a state the tool does not take)
// from a temporary failure and from any other refusal.
func refusalKind(text string) string {
	switch {
	case strings.Contains(text, "This is temporary"):
		return kindTemporary
	case strings.Contains(text, "changed by another call"),
		staleState.MatchString(text):
		return kindStale
	}
	return kindRefused
}
