// A scripted stand-in of the OpenAI Responses API on loopback, for running the real Codex CLI with no
// account and no network (a custom model provider in CODEX_HOME/config.toml whose base_url is this
// server's /v1). Codex POSTs /v1/responses with "stream": true; the stand-in answers with the SSE
// events Codex reads (response.created, response.output_item.added, response.output_text.delta,
// response.output_item.done, response.completed with usage) and picks the next output from the
// conversation it is sent: `turn(request)` returns (or resolves to) the output items of the reply,
// built with `say(text)` and `call(name, args, namespace)`; a script that holds a turn answers late.
// Every request is kept in `requests`.
//
// Like a real model it words each generation afresh: the arguments' keys come in a new order each
// time (a permission layer must not rely on a call's bytes), and call ids are new every time.
import { createServer } from 'node:http';

let seq = 0;
const id = (prefix) => `${prefix}_standin_${Date.now().toString(36)}_${++seq}`;

/** Shuffles an object's keys (deeply), as a model writing JSON afresh may order them. */
export function reorder(value) {
  if (Array.isArray(value)) return value.map(reorder);
  if (!value || typeof value !== 'object') return value;
  const keys = Object.keys(value);
  for (let i = keys.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [keys[i], keys[j]] = [keys[j], keys[i]];
  }
  return Object.fromEntries(keys.map((k) => [k, reorder(value[k])]));
}

/** An assistant message. */
export const say = (text) => ({ type: 'message', text });

/** A function call; MCP tools are called with namespace "mcp__<server>". */
export const call = (name, args, namespace) => ({ type: 'function_call', name, args, namespace });

/** The input items of a request (the whole conversation Codex sends). */
export const inputOf = (req) => (Array.isArray(req.input) ? req.input : []);

/** The text of a message input item. */
export const textOf = (item) => (typeof item.content === 'string' ? item.content
  : (item.content || []).map((c) => c.text || '').join('\n'));

/** The user messages' texts of a request, in order. */
export const userTexts = (req) => inputOf(req).filter((i) => i.type === 'message' && i.role === 'user').map(textOf);

/** The function calls of a request's conversation, with their outputs (by call_id) where Codex sent them. */
export function callsOf(req) {
  const outputs = new Map(inputOf(req).filter((i) => i.type === 'function_call_output').map((i) => [i.call_id, i.output]));
  return inputOf(req).filter((i) => i.type === 'function_call').map((i) => {
    let args = {};
    try { args = JSON.parse(i.arguments || '{}'); } catch { /* left empty */ }
    const out = outputs.get(i.call_id);
    return { name: i.name, namespace: i.namespace, call_id: i.call_id, args, output: typeof out === 'string' ? out : JSON.stringify(out ?? null), answered: outputs.has(i.call_id) };
  });
}

function wire(item) {
  if (item.type === 'message') {
    return { type: 'message', id: id('msg'), role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: item.text, annotations: [] }] };
  }
  const out = { type: 'function_call', id: id('fc'), call_id: id('call'), name: item.name, arguments: JSON.stringify(reorder(item.args)), status: 'completed' };
  if (item.namespace) out.namespace = item.namespace;
  return out;
}

function sse(res, items, model) {
  res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', Connection: 'keep-alive' });
  const send = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  const response = { id: id('resp'), object: 'response', created_at: Math.floor(Date.now() / 1000), model, status: 'in_progress', output: [] };
  send('response.created', { response });
  items.map(wire).forEach((item, output_index) => {
    if (item.type === 'message') {
      send('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', content: [] } });
      send('response.output_text.delta', { output_index, item_id: item.id, content_index: 0, delta: item.content[0].text });
    } else {
      send('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', arguments: '' } });
    }
    send('response.output_item.done', { output_index, item });
  });
  send('response.completed', { response: { ...response, status: 'completed', usage: {
    input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 10,
    output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 20 } } });
  res.end();
}

/** Starts the stand-in on 127.0.0.1 (a free port); `turn` scripts the replies. */
export async function startResponses(turn) {
  const requests = [];
  const errors = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', async () => {
      const path = new URL(req.url, 'http://x').pathname;
      if (req.method !== 'POST' || path !== '/v1/responses') {
        res.writeHead(404, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ error: { type: 'not_found', message: `stand-in: no ${req.method} ${path}` } }));
        return;
      }
      let parsed;
      try { parsed = JSON.parse(body || '{}'); } catch {
        res.writeHead(400, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ error: { type: 'invalid_request_error', message: 'stand-in: body is not JSON' } }));
        return;
      }
      requests.push(parsed);
      let items;
      try { items = await turn(parsed); } catch (e) { errors.push(e); items = [say(`stand-in error: ${e.message}`)]; }
      sse(res, items, parsed.model || 'standin');
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/v1`,
    requests,
    /** What `turn` threw (the reply was then a text saying so): a script that failed. */
    errors,
    close: () => new Promise((resolve) => { server.closeAllConnections?.(); server.close(resolve); }),
  };
}
