// A scripted stand-in of the Anthropic Messages API on loopback, for running the real Claude Code
// with no account and no network (ANTHROPIC_BASE_URL=<url>). It answers POST /v1/messages in the
// form asked (SSE when "stream": true, one JSON message otherwise) and picks the next assistant turn
// from the conversation it is sent: `turn(request)` returns (or resolves to) the content blocks of the reply.
// Every request is kept in `requests`, so a test can read the tool_result blocks Claude Code sends.
import { createServer } from 'node:http';

let seq = 0;
const id = (prefix) => `${prefix}_standin_${Date.now().toString(36)}_${++seq}`;

/** The tool_result blocks of a request's last user message. */
export function toolResultsOf(req) {
  const last = [...(req.messages || [])].reverse().find((m) => m.role === 'user');
  return (Array.isArray(last?.content) ? last.content : []).filter((b) => b.type === 'tool_result');
}

/** The text of a tool_result block (a string, or text blocks). */
export function resultText(block) {
  if (typeof block.content === 'string') return block.content;
  return (block.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

/**
 * A conversation that asks for one Bash call and then ends: the main loop's first turn (its tool
 * list has Bash, no tool_result yet) is a tool_use of Bash with `input`; after a tool_result, a
 * final text. Requests without Bash in their tools (titles, summaries) get a short text.
 */
export function oneBashCall(input) {
  return (req) => {
    const hasBash = (req.tools || []).some((t) => t.name === 'Bash');
    if (!hasBash) return [{ type: 'text', text: 'Prickle stand-in.' }];
    if (toolResultsOf(req).length > 0) return [{ type: 'text', text: 'Done: the step is settled for this run.' }];
    return [{ type: 'tool_use', id: id('toolu'), name: 'Bash', input }];
  };
}

/** The usage a reply reports unless `startStandIn`'s `usage` says otherwise. */
const SMALL_USAGE = { input_tokens: 10, output_tokens: 10 };

function message(req, content, usage) {
  return {
    id: id('msg'), type: 'message', role: 'assistant', model: req.model || 'claude-standin', content,
    stop_reason: content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn', stop_sequence: null,
    usage: { ...usage, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  };
}

function sse(res, msg) {
  res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', Connection: 'keep-alive' });
  const send = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  send('message_start', { message: { ...msg, content: [], stop_reason: null, usage: { ...msg.usage, output_tokens: 1 } } });
  msg.content.forEach((b, index) => {
    if (b.type === 'tool_use') {
      send('content_block_start', { index, content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} } });
      send('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(b.input) } });
    } else {
      send('content_block_start', { index, content_block: { type: 'text', text: '' } });
      send('content_block_delta', { index, delta: { type: 'text_delta', text: b.text } });
    }
    send('content_block_stop', { index });
  });
  send('message_delta', { delta: { stop_reason: msg.stop_reason, stop_sequence: null }, usage: { output_tokens: msg.usage.output_tokens } });
  send('message_stop', {});
  res.end();
}

/**
 * Starts the stand-in on 127.0.0.1 (a free port); `turn` scripts the replies. `usage(request)`, if
 * given, is the {input_tokens, output_tokens} a reply reports (Claude Code prices them to compute the
 * run's total_cost_usd); otherwise 10 and 10.
 */
export async function startStandIn(turn, { usage = () => SMALL_USAGE } = {}) {
  const requests = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', async () => {
      const path = new URL(req.url, 'http://x').pathname;
      if (req.method !== 'POST' || !path.startsWith('/v1/messages')) {
        res.writeHead(404, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: `stand-in: no ${req.method} ${path}` } }));
        return;
      }
      let parsed;
      try { parsed = JSON.parse(body || '{}'); } catch {
        res.writeHead(400, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: 'stand-in: body is not JSON' } }));
        return;
      }
      if (path === '/v1/messages/count_tokens') {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ input_tokens: 10 }));
        return;
      }
      requests.push(parsed);
      const msg = message(parsed, await turn(parsed), usage(parsed));
      if (res.destroyed) return; // the client went away while the model "thought"
      if (parsed.stream) return sse(res, msg);
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(msg));
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    requests,
    /** Every tool_result block Claude Code sent, in order. */
    toolResults: () => requests.flatMap(toolResultsOf),
    close: () => new Promise((resolve) => { server.closeAllConnections?.(); server.close(resolve); }),
  };
}
