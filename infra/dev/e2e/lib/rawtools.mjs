// Tool calls over raw HTTP (2026-07-28 era) with result checks, for the wire suites.
import assert from 'node:assert/strict';
import { modernCall, modernTool } from './wire.mjs';
import { OutputValidator, checkRefused } from './validate.mjs';
import { PROJECT, uniq } from './env.mjs';

export async function rawClient(url, token) {
  const list = await modernCall(url, token, 'tools/list', {});
  assert.equal(list.status, 200, `tools/list: HTTP ${list.status} ${list.text.slice(0, 300)}`);
  const V = new OutputValidator(list.json.result.tools);
  const result = async (name, args) => {
    const r = await modernTool(url, token, name, args);
    assert.ok(r.json?.result, `${name}: expected a result, got HTTP ${r.status} ${r.text.slice(0, 500)}`);
    return r.json.result;
  };
  return {
    V,
    result,
    raw: (name, args, opts) => modernTool(url, token, name, args, opts),
    ok: async (name, args) => V.checkOk(name, await result(name, args)),
    refused: async (name, args, mention) => checkRefused(name, await result(name, args), mention),
  };
}

export async function handOffRaw(client, assignee, packet = {}) {
  return (await client.ok('hand_off_task', {
    project: PROJECT, assignee,
    packet: { task: `e2e raw ${uniq()}`, deliverable_type: 'answer', acceptance_criteria: ['It is answered.'], ...packet },
  })).task;
}

/** Every task bob sees as requester in website-v2, all pages. */
export async function allRequesterTasks(client) {
  const out = [];
  let cursor;
  for (let i = 0; i < 100; i++) {
    const room = await client.ok('read_room', { project: PROJECT, role: 'requester', limit: 100, ...(cursor ? { cursor } : {}) });
    out.push(...room.tasks);
    if (!room.next_cursor) break;
    cursor = room.next_cursor;
  }
  return out;
}
