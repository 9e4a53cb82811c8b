// Scripted stand-ins on loopback of the two model wire APIs the qwen, gemini and copilot templates'
// CLIs speak, for running them with no account and no network:
//   - OpenAI chat completions (Qwen Code with OPENAI_BASE_URL, Copilot CLI with COPILOT_PROVIDER_BASE_URL):
//     POST /v1/chat/completions, SSE chunks when "stream" is set (tool_calls by index), plain JSON otherwise;
//   - Gemini (Gemini CLI with GOOGLE_GEMINI_BASE_URL): POST /v1beta/models/<m>:streamGenerateContent?alt=sse
//     (one SSE chunk of candidates[0].content.parts), :generateContent and :countTokens.
// Both read the request into one conversation shape ({tools, messages: [{role, text, calls, results}]}) and
// answer what `turn(conversation)` returns: {text} or {calls: [{name, args}]} (several: parallel calls).
// Like a real model, each call is written afresh: new ids every reply, the arguments' keys in a new order.
// Every request is kept in `requests` ({api, body, conversation}); each reply counts 10 tokens in, 10 out unless told otherwise.
import { createServer } from 'node:http';

let seq = 0;
const newId = (prefix) => `${prefix}_${Date.now().toString(36)}_${++seq}`;

/** The object's keys in a random order, as a model writing JSON afresh may put them. */
export function reorder(value) {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return value;
  const keys = Object.keys(value);
  for (let i = keys.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [keys[i], keys[j]] = [keys[j], keys[i]];
  }
  return Object.fromEntries(keys.map((k) => [k, value[k]]));
}

const textOfContent = (c) => (typeof c === 'string' ? c : Array.isArray(c) ? c.map((p) => (typeof p === 'string' ? p : p.text || '')).join('\n') : '');

/** An OpenAI chat request as a conversation. */
function fromOpenAI(body) {
  const tools = (body.tools || []).map((t) => (t.function ? t.function.name : t.name));
  const messages = [];
  for (const m of body.messages || []) {
    if (m.role === 'tool') {
      const last = messages.at(-1);
      const result = { id: m.tool_call_id, text: textOfContent(m.content) };
      if (last && last.role === 'tool') last.results.push(result);
      else messages.push({ role: 'tool', text: '', calls: [], results: [result] });
      continue;
    }
    const calls = (m.tool_calls || []).map((c) => {
      let args = {};
      try { args = JSON.parse(c.function.arguments || '{}'); } catch { /* left empty */ }
      return { id: c.id, name: c.function.name, args };
    });
    messages.push({ role: m.role, text: textOfContent(m.content), calls, results: [] });
  }
  return { tools, messages };
}

/** A Gemini generateContent request as a conversation (function results are matched by name and order). */
function fromGemini(body) {
  const tools = (body.tools || []).flatMap((t) => t.functionDeclarations || []).map((d) => d.name);
  const messages = [];
  const sys = body.systemInstruction ? textOfContent((body.systemInstruction.parts || []).map((p) => p.text || '')) : '';
  if (sys) messages.push({ role: 'system', text: sys, calls: [], results: [] });
  let n = 0;
  for (const c of body.contents || []) {
    const parts = c.parts || [];
    const text = parts.filter((p) => typeof p.text === 'string').map((p) => p.text).join('\n');
    const calls = parts.filter((p) => p.functionCall).map((p) => ({ id: p.functionCall.id || `g${++n}`, name: p.functionCall.name, args: p.functionCall.args || {} }));
    const results = parts.filter((p) => p.functionResponse).map((p) => ({ id: p.functionResponse.id, name: p.functionResponse.name,
      text: JSON.stringify(p.functionResponse.response ?? {}) }));
    if (results.length) messages.push({ role: 'tool', text, calls: [], results });
    else messages.push({ role: c.role === 'model' ? 'assistant' : 'user', text, calls, results: [] });
  }
  return { tools, messages };
}

/**
 * Starts the stand-in; `turn(conversation, {api})` picks each reply. `usage()`, if given, is the
 * {input, output} tokens each reply reports (else 10 and 10).
 */
export async function startChatModels(turn, { usage: usageOf } = {}) {
  const requests = [];
  const errors = [];
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => { raw += d; });
    req.on('end', async () => {
      let body = {};
      try { body = JSON.parse(raw || '{}'); } catch { /* a GET */ }
      const url = req.url || '';
      if (req.method === 'GET') {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ object: 'list', data: [{ id: 'mock-model', object: 'model', owned_by: 'prickle-e2e' }] }));
        return;
      }
      if (/:countTokens/.test(url)) { res.writeHead(200, { 'Content-Type': 'application/json' }); res.end('{"totalTokens":10}'); return; }
      const api = /generateContent/i.test(url) ? 'gemini' : 'openai';
      const conversation = api === 'gemini' ? fromGemini(body) : fromOpenAI(body);
      requests.push({ api, url, body, conversation });
      let reply;
      try {
        reply = await turn(conversation, { api });
      } catch (e) {
        errors.push(e);
        reply = { text: `stand-in error: ${e.message}` };
      }
      const tok = usageOf?.() || { input: 10, output: 10 };
      const calls = (reply.calls || []).map((c) => ({ id: newId('call'), name: c.name, args: reorder(c.args) }));
      if (api === 'gemini') {
        const parts = calls.length ? calls.map((c) => ({ functionCall: { name: c.name, args: c.args } })) : [{ text: reply.text || '' }];
        const chunk = { candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
          usageMetadata: { promptTokenCount: tok.input, candidatesTokenCount: tok.output, totalTokenCount: tok.input + tok.output }, modelVersion: body.model || 'gemini-2.5-flash', responseId: newId('resp') };
        if (/alt=sse/.test(url)) { res.writeHead(200, { 'Content-Type': 'text/event-stream' }); res.end(`data: ${JSON.stringify(chunk)}\n\n`); return; }
        res.writeHead(200, { 'Content-Type': 'application/json' }); res.end(JSON.stringify(chunk));
        return;
      }
      const usage = { prompt_tokens: tok.input, completion_tokens: tok.output, total_tokens: tok.input + tok.output };
      const base = { id: newId('chatcmpl'), created: Math.floor(Date.now() / 1000), model: body.model || 'mock-model' };
      const toolCalls = calls.map((c, index) => ({ index, id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.args) } }));
      if (!body.stream) {
        const message = calls.length ? { role: 'assistant', content: null, tool_calls: toolCalls.map(({ index, ...c }) => c) } : { role: 'assistant', content: reply.text || '' };
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ ...base, object: 'chat.completion', choices: [{ index: 0, message, finish_reason: calls.length ? 'tool_calls' : 'stop' }], usage }));
        return;
      }
      res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
      const send = (o) => res.write(`data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', ...o })}\n\n`);
      send({ choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] });
      if (calls.length) {
        for (const tc of toolCalls) {
          send({ choices: [{ index: 0, delta: { tool_calls: [{ index: tc.index, id: tc.id, type: 'function', function: { name: tc.function.name, arguments: '' } }] }, finish_reason: null }] });
          send({ choices: [{ index: 0, delta: { tool_calls: [{ index: tc.index, function: { arguments: tc.function.arguments } }] }, finish_reason: null }] });
        }
        send({ choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] });
      } else {
        send({ choices: [{ index: 0, delta: { content: reply.text || '' }, finish_reason: null }] });
        send({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
      }
      send({ choices: [], usage });
      res.end('data: [DONE]\n\n');
    });
  });
  await new Promise((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address();
  return { url: `http://127.0.0.1:${port}`, requests, errors, close: () => new Promise((done) => { server.closeAllConnections?.(); server.close(done); }) };
}
