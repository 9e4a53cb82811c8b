// Pull mode on the local stack (the server side): an agent switched to pull with the admin
// CLI gets its wake-ups from POST /runner/claim (agent token, long poll), exactly one claimer each,
// with a run token that works on /mcp, and acknowledges them with POST /runner/ack.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadStack, skipUnlessStack, admin, PROJECT } from '../lib/env.mjs';
import { modernTool } from '../lib/wire.mjs';
import { rawClient, handOffRaw } from '../lib/rawtools.mjs';

const { stack, skipReason } = await loadStack();
const AGENT = 'bob/puller';

async function runner(path, token, body) {
  const r = await fetch(new URL(path, stack.url), {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  const text = await r.text();
  return { status: r.status, text, json: text ? JSON.parse(text) : null };
}

describe('pull wake-ups', { skip: skipUnlessStack(skipReason) }, () => {
  test('set-wake --pull; two runners polling: the hand-off reaches exactly one, its run token works, ack is final', async () => {
    admin(['create-agent', '--id', AGENT, '--projects', PROJECT]);
    const token = admin(['mint-token', '--agent', AGENT]).token;
    assert.deepEqual(admin(['set-wake', '--agent', AGENT, '--pull']), { agent: AGENT, mode: 'pull' });

    const bob = await rawClient(stack.url, stack.tokens['bob/reviewer']);
    const polls = [1, 2].map(() => runner('/runner/claim', token, { wait_seconds: 8, max: 10 }));
    const task = await handOffRaw(bob, AGENT);
    const answers = await Promise.all(polls);
    for (const a of answers) assert.equal(a.status, 200, a.text);
    const got = answers.flatMap((a) => a.json.wakeups);
    assert.equal(got.length, 1, `two runners got ${got.length} wake-ups: ${JSON.stringify(answers.map((a) => a.json))}`);
    const [w] = got;
    assert.deepEqual(Object.keys(w.delivery).sort(), ['reason', 'resumes_run', 'run_id', 'run_token', 'task_id']);
    assert.equal(w.delivery.task_id, task.id);
    assert.equal(w.delivery.reason, 'task_routed');
    assert.match(w.delivery.run_token, /^prk_r_/);
    assert.ok(Date.parse(w.visible_until) > Date.now(), w.visible_until);

    // The run token is a woken run of that task.
    const r = await modernTool(stack.url, w.delivery.run_token, 'get_task', { task_id: task.id });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.result.structuredContent.task.id, task.id);
    // ... and cannot claim; another agent sees none of it.
    assert.equal((await runner('/runner/claim', w.delivery.run_token, { wait_seconds: 0 })).status, 401);
    assert.deepEqual((await runner('/runner/claim', stack.tokens['carol/tester'], { wait_seconds: 0, max: 10 })).json, { wakeups: [] });
    assert.equal((await runner('/runner/ack', stack.tokens['carol/tester'], { id: w.id, claim: w.claim })).status, 404);

    assert.equal((await runner('/runner/ack', token, { id: w.id, claim: 'wkc_guessed' })).status, 409);
    assert.equal((await runner('/runner/ack', token, { id: w.id, claim: w.claim })).status, 204);
    assert.equal((await runner('/runner/ack', token, { id: w.id, claim: w.claim })).status, 204);
    assert.deepEqual((await runner('/runner/claim', token, { wait_seconds: 0, max: 10 })).json, { wakeups: [] });
    assert.equal((await runner('/runner/claim', token, { wait_seconds: 26 })).status, 400);
  });
});
