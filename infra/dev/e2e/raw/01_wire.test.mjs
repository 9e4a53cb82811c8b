// Wire details over raw HTTP: both eras, SEP-2243 headers, auth, protocol faults, size limit.
import { describe, test, before } from 'node:test';
import assert from 'node:assert/strict';
import { loadStack, skipUnlessStack, uniq, TOOL_NAMES, PROJECT } from '../lib/env.mjs';
import { post, bearer, modernCall, modernRequest, modernTool, legacySession, MODERN, newId } from '../lib/wire.mjs';
import { OutputValidator } from '../lib/validate.mjs';
import { rawClient, allRequesterTasks } from '../lib/rawtools.mjs';

const { stack, skipReason } = await loadStack();

describe('MCP wire', { skip: skipUnlessStack(skipReason) }, () => {
  let url, bob, writer, bobToken;
  const markers = []; // packet.task texts of calls that must not have stored anything
  const badHandOff = (extra = {}) => {
    const m = `must-not-store ${uniq()}`;
    markers.push(m);
    return { project: PROJECT, assignee: 'alice/writer', packet: { task: m, deliverable_type: 'answer', acceptance_criteria: ['x'] }, ...extra };
  };

  before(async () => {
    url = stack.url;
    bobToken = stack.tokens['bob/reviewer'];
    bob = await rawClient(url, bobToken);
    writer = await rawClient(url, stack.tokens['alice/writer']);
  });

  describe('2026-07-28 (stateless, SEP-2575/SEP-2243)', () => {
    test('server/discover answers supportedVersions including 2026-07-28 and the tools capability', async () => {
      const r = await modernCall(url, bobToken, 'server/discover', {});
      assert.equal(r.status, 200, r.text);
      const res = r.json.result;
      assert.ok(Array.isArray(res.supportedVersions), JSON.stringify(res));
      assert.ok(res.supportedVersions.includes(MODERN));
      assert.ok(res.capabilities?.tools, 'tools capability');
      assert.equal(r.headers.get('mcp-session-id'), null, 'no session id in 2026-07-28');
    });

    test('tools/list and tools/call work statelessly, results validate', async () => {
      const r = await modernCall(url, bobToken, 'tools/list', {});
      assert.equal(r.status, 200);
      assert.deepEqual(r.json.result.tools.map((t) => t.name).sort(), [...TOOL_NAMES].sort());
      const V = new OutputValidator(r.json.result.tools);
      const c = await modernTool(url, bobToken, 'get_task', { task_id: 'example-task-id' });
      assert.equal(c.status, 200, c.text);
      const out = V.checkOk('get_task', c.json.result);
      assert.equal(out.task.id, 'example-task-id');
    });

    const refusal = (r, id) => {
      assert.equal(r.status, 400, `HTTP status (spec: 400 Bad Request): ${r.status} ${r.text}`);
      assert.equal(r.json?.error?.code, -32020, `JSON-RPC code (spec: -32020 HeaderMismatch): ${r.text}`);
      if (id !== undefined) assert.equal(r.json.id, id, 'error echoes the request id');
    };

    test('POST without Mcp-Method is refused: 400 + -32020', async () => {
      const { body, headers } = modernRequest('tools/list', {}, { omit: ['Mcp-Method'] });
      refusal(await post(url, body, { ...bearer(bobToken), ...headers }), body.id);
    });

    test('POST with a mismatched Mcp-Method is refused: 400 + -32020', async () => {
      const { body, headers } = modernRequest('tools/list', {}, { headers: { 'Mcp-Method': 'prompts/list' } });
      refusal(await post(url, body, { ...bearer(bobToken), ...headers }), body.id);
    });

    test('Mcp-Method values are case-sensitive: TOOLS/LIST is refused', async () => {
      const { body, headers } = modernRequest('tools/list', {}, { headers: { 'Mcp-Method': 'TOOLS/LIST' } });
      refusal(await post(url, body, { ...bearer(bobToken), ...headers }), body.id);
    });

    test('tools/call without Mcp-Name is refused and stores nothing', async () => {
      const { body, headers } = modernRequest('tools/call', { name: 'hand_off_task', arguments: badHandOff() }, { omit: ['Mcp-Name'] });
      refusal(await post(url, body, { ...bearer(bobToken), ...headers }), body.id);
    });

    test('tools/call with a mismatched Mcp-Name is refused and stores nothing', async () => {
      const { body, headers } = modernRequest('tools/call', { name: 'hand_off_task', arguments: badHandOff() }, { headers: { 'Mcp-Name': 'get_task' } });
      refusal(await post(url, body, { ...bearer(bobToken), ...headers }), body.id);
    });

    test('Mcp-Method given as tools/call for a tools/list body is refused', async () => {
      const { body, headers } = modernRequest('tools/list', {}, { headers: { 'Mcp-Method': 'tools/call', 'Mcp-Name': 'get_task' } });
      refusal(await post(url, body, { ...bearer(bobToken), ...headers }), body.id);
    });

    test('header names are case-insensitive; whitespace around Mcp-Name is trimmed', async () => {
      const { body } = modernRequest('tools/list', {});
      const r = await post(url, body, { ...bearer(bobToken), 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/list' });
      assert.equal(r.status, 200, r.text);
      assert.ok(r.json.result);
      const call = modernRequest('tools/call', { name: 'get_task', arguments: { task_id: 'example-task-id' } }, { headers: { 'Mcp-Name': '  get_task  ' } });
      const c = await post(url, call.body, { ...bearer(bobToken), ...call.headers });
      assert.equal(c.status, 200, c.text);
      assert.ok(c.json.result && !c.json.result.isError, c.text);
    });

    test('JSON-RPC errors carry the HTTP status 2026-07-28 maps them to (-32602 → 400, as mcp-go maps it)', async () => {
      const unknown = await modernTool(url, bobToken, 'no_such_tool', {});
      const invalid = await modernTool(url, bobToken, 'get_task', { task_id: 'has spaces' });
      assert.equal(invalid.json?.error?.code, -32602, invalid.text);
      assert.equal(invalid.status, 400, `schema violation answered HTTP ${invalid.status} (unknown tool, also -32602, answers ${unknown.status}): ${invalid.text}`);
    });

    test('subscriptions/listen: -32601 when nothing is subscribable, else a stream opening with the acknowledgement', async () => {
      const discover = (await modernCall(url, bobToken, 'server/discover', {})).json.result;
      const caps = discover.capabilities || {};
      const subscribable = !!(caps.tools?.listChanged || caps.prompts?.listChanged || caps.resources?.listChanged || caps.resources?.subscribe);
      const ctl = new AbortController();
      const { body, headers } = modernRequest('subscriptions/listen', { notifications: { toolsListChanged: true } });
      const res = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...bearer(bobToken), ...headers }, body: JSON.stringify(body), signal: ctl.signal });
      let text = '';
      const reader = res.body.getReader();
      const timer = setTimeout(() => ctl.abort(), 1500);
      try { for (;;) { const { value, done } = await reader.read(); if (done) break; text += Buffer.from(value).toString(); if (text.includes('acknowledged')) break; } } catch { /* aborted */ }
      clearTimeout(timer);
      ctl.abort();
      if (!subscribable) {
        assert.match(text, /-32601/, `server advertises no listChanged/subscribe, so subscriptions/listen should be -32601 (Method not found); got HTTP ${res.status}: ${text.slice(0, 400)}`);
      } else {
        assert.match(text, /notifications\/subscriptions\/acknowledged/, `first message should be the acknowledgement: ${text.slice(0, 400)}`);
      }
    });

    test('an unknown method at 2026-07-28 → -32601 method not found', async () => {
      const r = await modernCall(url, bobToken, 'no/such_method', {});
      assert.equal(r.json?.error?.code, -32601, r.text);
    });
  });

  describe('handshake era', () => {
    for (const version of ['2025-06-18', '2025-11-25']) {
      test(`${version}: initialize, tools/list, tools/call (stateless)`, async () => {
        const s = await legacySession(url, bobToken, version);
        assert.equal(s.negotiated, version);
        assert.ok(s.init.json.result.capabilities.tools);
        assert.ok(s.init.json.result.serverInfo?.name);
        assert.ok([200, 202, 204].includes(s.initializedStatus), `initialized notification: ${s.initializedStatus}`);
        const list = await s.call('tools/list', {});
        assert.equal(list.status, 200, list.text);
        assert.deepEqual(list.json.result.tools.map((t) => t.name).sort(), [...TOOL_NAMES].sort());
        const V = new OutputValidator(list.json.result.tools);
        const got = await s.tool('get_task', { task_id: 'example-task-id' });
        assert.equal(got.status, 200, got.text);
        assert.equal(V.checkOk('get_task', got.json.result).task.id, 'example-task-id');
        const room = await s.tool('read_room', { project: PROJECT, limit: 5 });
        V.checkOk('read_room', room.json.result);
        const ping = await s.call('ping', {});
        assert.deepEqual(ping.json?.result, {}, ping.text);
      });
    }

    test('2025-11-25 without initialize: a tools/call still works (stateless server)', async () => {
      const r = await post(url, { jsonrpc: '2.0', id: newId(), method: 'tools/call', params: { name: 'get_task', arguments: { task_id: 'example-task-id' } } },
        { ...bearer(bobToken), 'MCP-Protocol-Version': '2025-11-25' });
      assert.equal(r.status, 200, r.text);
      assert.ok(r.json.result && !r.json.result.isError, r.text);
    });
  });

  describe('authentication', () => {
    const body = () => ({ jsonrpc: '2.0', id: newId(), method: 'tools/call', params: { name: 'hand_off_task', arguments: badHandOff() } });
    const expect401 = (r, what) => {
      assert.equal(r.status, 401, `${what}: HTTP ${r.status} ${r.text}`);
      const wa = r.headers.get('www-authenticate');
      assert.ok(wa && /^Bearer\b/i.test(wa), `${what}: WWW-Authenticate: Bearer ... (got ${wa})`);
    };
    test('no token → 401 with WWW-Authenticate: Bearer (both eras)', async () => {
      expect401(await post(url, body(), { 'MCP-Protocol-Version': '2025-11-25' }), 'handshake era');
      const { body: b, headers } = modernRequest('tools/call', { name: 'hand_off_task', arguments: badHandOff() });
      expect401(await post(url, b, headers), '2026-07-28');
      expect401(await post(url, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '0' } } }), 'initialize');
    });
    test('wrong token → 401', async () => {
      expect401(await post(url, body(), bearer('prk_a_thisisnotarealtoken0000000000')), 'unknown agent token');
      expect401(await post(url, body(), bearer('prk_r_thisisnotarealtoken0000000000')), 'unknown run token');
      expect401(await post(url, body(), bearer(`${bobToken}x`)), 'tampered token');
      expect401(await post(url, body(), { Authorization: `Basic ${Buffer.from('bob:pw').toString('base64')}` }), 'basic auth');
    });
  });

  describe('Origin (MCP transport: servers validate Origin)', () => {
    const init = () => ({ jsonrpc: '2.0', id: newId(), method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '0' } } });
    test('a foreign or null Origin → 403 with a JSON-RPC error, even with a valid token (both eras)', async () => {
      for (const origin of ['http://evil.example', 'null']) {
        const legacy = await post(url, init(), { ...bearer(bobToken), Origin: origin });
        assert.equal(legacy.status, 403, `initialize from ${origin}: HTTP ${legacy.status} ${legacy.text}`);
        assert.ok(legacy.json?.error, legacy.text);
        const list = await modernCall(url, bobToken, 'tools/list', {}, { headers: { Origin: origin } });
        assert.equal(list.status, 403, `tools/list from ${origin}: HTTP ${list.status} ${list.text}`);
        const call = await modernCall(url, bobToken, 'tools/call', { name: 'get_task', arguments: { task_id: 'example-task-id' } }, { headers: { Origin: origin } });
        assert.equal(call.status, 403, `tools/call from ${origin}: HTTP ${call.status} ${call.text}`);
      }
    });
    test('no Origin, or the stack’s own origin → served', async () => {
      assert.equal((await post(url, init(), bearer(bobToken))).status, 200);
      const own = new URL(url).origin;
      const r = await modernCall(url, bobToken, 'tools/list', {}, { headers: { Origin: own } });
      assert.equal(r.status, 200, `tools/list from ${own}: ${r.text}`);
    });
  });

  describe('protocol faults (nothing stored)', () => {
    test('invalid JSON → -32700 parse error', async () => {
      const m = `must-not-store ${uniq()}`;
      markers.push(m);
      const text = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"hand_off_task","arguments":{"project":"${PROJECT}","assignee":"alice/writer","packet":{"task":"${m}"`;
      const r = await post(url, text, { ...bearer(bobToken), 'MCP-Protocol-Version': '2025-11-25' });
      assert.equal(r.json?.error?.code, -32700, `HTTP ${r.status} ${r.text}`);
      assert.ok([200, 400].includes(r.status), `HTTP ${r.status}`);
      const r2 = await post(url, 'not json at all', { ...bearer(bobToken), 'MCP-Protocol-Version': MODERN, 'Mcp-Method': 'tools/call', 'Mcp-Name': 'hand_off_task' });
      assert.equal(r2.json?.error?.code, -32700, `2026-07-28: HTTP ${r2.status} ${r2.text}`);
    });

    test('schema violations → -32602 naming the field (both eras)', async () => {
      const cases = [
        [{ ...badHandOff(), packet: { task: markers.at(-1), deliverable_type: 'answer' } }, 'acceptance_criteria'],
        [badHandOff({ assignee: 'not-an-agent' }), 'assignee'],
        [{ ...badHandOff(), packet: { task: markers.at(-1), deliverable_type: 'poem', acceptance_criteria: ['x'] } }, 'deliverable_type'],
      ];
      for (const [args, field] of cases) {
        const r = await modernTool(url, bobToken, 'hand_off_task', args);
        assert.equal(r.json?.error?.code, -32602, `${field}: ${r.text}`);
        assert.match(r.json.error.message + JSON.stringify(r.json.error.data ?? ''), new RegExp(field), `error names ${field}`);
      }
      const s = await legacySession(url, bobToken);
      const g = await s.tool('get_task', { task_id: 'has spaces!' });
      assert.equal(g.json?.error?.code, -32602, g.text);
      assert.match(g.json.error.message + JSON.stringify(g.json.error.data ?? ''), /task_id/);
      const l = await s.tool('read_room', { project: PROJECT, limit: 1000 });
      assert.equal(l.json?.error?.code, -32602, l.text);
      assert.match(l.json.error.message + JSON.stringify(l.json.error.data ?? ''), /limit/);
    });

    test('body over 1 MiB → HTTP 413', async () => {
      const args = badHandOff({ padding: 'x'.repeat(1024 * 1024 + 16) });
      const r1 = await post(url, { jsonrpc: '2.0', id: newId(), method: 'tools/call', params: { name: 'hand_off_task', arguments: args } }, { ...bearer(bobToken), 'MCP-Protocol-Version': '2025-11-25' });
      assert.equal(r1.status, 413, `handshake era: HTTP ${r1.status} ${r1.text.slice(0, 300)}`);
      const { body, headers } = modernRequest('tools/call', { name: 'hand_off_task', arguments: badHandOff({ padding: 'y'.repeat(1024 * 1024 + 16) }) });
      const r2 = await post(url, body, { ...bearer(bobToken), ...headers });
      assert.equal(r2.status, 413, `2026-07-28: HTTP ${r2.status} ${r2.text.slice(0, 300)}`);
    });

    test('a body just under 1 MiB is not refused for its size', async () => {
      const { body, headers } = modernRequest('tools/call', { name: 'get_task', arguments: { task_id: 'example-task-id', padding: 'z'.repeat(900 * 1024) } });
      const r = await post(url, body, { ...bearer(bobToken), ...headers });
      assert.notEqual(r.status, 413, r.text.slice(0, 300));
    });

    test('unknown tool → JSON-RPC error (both eras)', async () => {
      const r = await modernTool(url, bobToken, 'hand_off_tasks', badHandOff());
      assert.ok(r.json?.error, `2026-07-28: expected a JSON-RPC error, got ${r.text}`);
      assert.match(r.json.error.message, /hand_off_tasks/);
      const s = await legacySession(url, bobToken);
      const r2 = await s.tool('delete_everything', badHandOff());
      assert.ok(r2.json?.error, `handshake era: expected a JSON-RPC error, got ${r2.text}`);
    });

    test('none of the refused calls above stored a task', async () => {
      assert.ok(markers.length >= 8, `markers: ${markers.length}`);
      const tasks = await allRequesterTasks(bob);
      const texts = tasks.map((t) => t.packet.task);
      for (const m of markers) assert.ok(!texts.includes(m), `a refused call stored "${m}"`);
      const writerRoom = await writer.ok('read_room', { project: PROJECT, role: 'assignee', limit: 100 });
      for (const t of writerRoom.tasks) assert.ok(!markers.includes(t.packet.task), `stored: ${t.packet.task}`);
    });
  });
});
