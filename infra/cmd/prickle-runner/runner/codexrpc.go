package runner

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
)

// maxRPCLine bounds one JSON-RPC message from Codex (a command's output
// can be long; a thread is resumed without its turns).
const maxRPCLine = 32 << 20

// rpcMessage is one JSON-RPC message as `codex app-server` frames them: one
// JSON object per line. A request has an id and a method, a notification a
// method only, a response an id and a result or an error.
type rpcMessage struct {
	JSONRPC string          `json:"jsonrpc,omitempty"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

func (m rpcMessage) isRequest() bool      { return len(m.ID) > 0 && m.Method != "" }
func (m rpcMessage) isNotification() bool { return len(m.ID) == 0 && m.Method != "" }
func (m rpcMessage) isResponse() bool     { return len(m.ID) > 0 && m.Method == "" }

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message) }

// rpcMethodNotFound answers a request the runner does not serve.
const rpcMethodNotFound = -32601

// rpcConn is the client's side of a JSON-RPC connection over a line stream:
// Call waits for its response; the other side's requests and notifications
// arrive on Incoming, in order; Done closes when the stream ends.
type rpcConn struct {
	wmu sync.Mutex
	w   io.Writer

	mu      sync.Mutex
	next    int64
	pending map[string]chan rpcMessage
	err     error

	incoming chan rpcMessage
	done     chan struct{}
}

// newRPCConn starts reading r; messages are written to w.
func newRPCConn(r io.Reader, w io.Writer) *rpcConn {
	c := &rpcConn{w: w, pending: map[string]chan rpcMessage{}, incoming: make(chan rpcMessage, 64), done: make(chan struct{})}
	go c.read(r)
	return c
}

// Incoming carries the other side's requests and notifications; it is closed when the stream ends.
func (c *rpcConn) Incoming() <-chan rpcMessage { return c.incoming }

// Done is closed when the stream has ended; Err then says why.
func (c *rpcConn) Done() <-chan struct{} { return c.done }

// Err is why the stream ended (io.EOF when it simply closed).
func (c *rpcConn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *rpcConn) read(r io.Reader) {
	br := bufio.NewReaderSize(r, 64<<10)
	var err error
	for {
		var line []byte
		line, err = readLine(br, maxRPCLine)
		if len(bytes.TrimSpace(line)) > 0 {
			var m rpcMessage
			if jerr := json.Unmarshal(line, &m); jerr != nil {
				err = fmt.Errorf("a line from Codex is not JSON-RPC: %w", jerr)
				break
			}
			c.deliver(m)
		}
		if err != nil {
			break
		}
	}
	c.mu.Lock()
	c.err = err
	for id, ch := range c.pending {
		close(ch)
		delete(c.pending, id)
	}
	c.mu.Unlock()
	close(c.incoming)
	close(c.done)
}

// readLine reads one line of at most max bytes (without its newline).
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > max {
			return nil, fmt.Errorf("a line from Codex is over %d bytes", max)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSuffix(line, []byte("\n")), err
	}
}

func (c *rpcConn) deliver(m rpcMessage) {
	if m.isResponse() {
		key := string(bytes.TrimSpace(m.ID))
		c.mu.Lock()
		ch, ok := c.pending[key]
		delete(c.pending, key)
		c.mu.Unlock()
		if ok {
			ch <- m
		}
		return
	}
	c.incoming <- m
}

func (c *rpcConn) write(m rpcMessage) error {
	m.JSONRPC = "2.0"
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("encode %s: %w", m.Method, err)
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if _, err := c.w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("write to Codex: %w", err)
	}
	return nil
}

// Call sends a request and decodes its result into result (if not nil).
func (c *rpcConn) Call(ctx context.Context, method string, params, result any) error {
	p, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("encode %s params: %w", method, err)
	}
	ch := make(chan rpcMessage, 1)
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return fmt.Errorf("%s: the connection to Codex has ended: %w", method, c.err)
	}
	c.next++
	id := strconv.FormatInt(c.next, 10)
	c.pending[id] = ch
	c.mu.Unlock()
	if err := c.write(rpcMessage{ID: json.RawMessage(id), Method: method, Params: p}); err != nil {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		return fmt.Errorf("%s: %w", method, err)
	}
	select {
	case m, ok := <-ch:
		if !ok {
			return fmt.Errorf("%s: the connection to Codex ended before the answer: %w", method, c.Err())
		}
		if m.Error != nil {
			return fmt.Errorf("%s: %w", method, m.Error)
		}
		if result != nil {
			if err := json.Unmarshal(m.Result, result); err != nil {
				return fmt.Errorf("%s: decode result: %w", method, err)
			}
		}
		return nil
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// Notify sends a notification.
func (c *rpcConn) Notify(method string, params any) error {
	var p json.RawMessage
	if params != nil {
		b, err := json.Marshal(params)
		if err != nil {
			return fmt.Errorf("encode %s params: %w", method, err)
		}
		p = b
	}
	return c.write(rpcMessage{Method: method, Params: p})
}

// Reply answers the other side's request id with result.
func (c *rpcConn) Reply(id json.RawMessage, result any) error {
	b, err := json.Marshal(result)
	if err != nil {
		return fmt.Errorf("encode reply: %w", err)
	}
	return c.write(rpcMessage{ID: id, Result: b})
}

// ReplyError answers the other side's request id with an error.
func (c *rpcConn) ReplyError(id json.RawMessage, code int, message string) error {
	return c.write(rpcMessage{ID: id, Error: &rpcError{Code: code, Message: message}})
}
